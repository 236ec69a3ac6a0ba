import { expect, test } from 'bun:test';
import governanceLists from '../../plugins/governance-lists/index.ts';
import testController from '../../plugins/test-controller/index.ts';
import { forEachDatabase } from '../support/db.ts';
import type { TaskClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { mcpClient } from '../support/agent.ts';
import { HOUR, OTHER_TOKEN, startSalesWorld, type SalesWorld } from './fixture.ts';
import { startListsServer, TOKEN as GOV_TOKEN, type ListsServer } from '../governance/lists-fixture.ts';
import { loopbackResolver, TEST_CERT } from '../support/loopback.ts';
import { startTlsFront } from '../support/tls-front.ts';

let n = 0;
const key = (p: string) => `${p}-lists-${String(++n).padStart(8, '0')}`;
const natural = (brand: string) => ({ brand: { domain: brand }, operator: 'pinnacle-agency.example' });
const domains = (...d: string[]) => d.map((value) => ({ type: 'domain', value }));

interface World {
  seller: SalesWorld;
  remote: ListsServer;
  /** The remote governance agent as the seller reaches it: https with a verified name (a TLS front on loopback). */
  front: ReturnType<typeof startTlsFront>;
}

/**
 * The seller honours property and collection lists (issue 24, item 2): get_products keeps the
 * products of the listed publishers; a package delivers the share of its product's publishers its
 * property list keeps (none: booked with a note, delivering nothing); lists of this deployment are
 * read in process, others fetched from their governance agent and cached until their cache_valid_until.
 */
forEachDatabase<World>(
  'sales list targeting',
  async (adapter, schema) => {
    const remote = await startListsServer(adapter, `${schema}_gov`, { webhooks: false });
    const front = startTlsFront();
    front.route('lists.pub.test', remote.server.base);
    const seller = await startSalesWorld(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      sales: { sandbox: true },
      crawler: { resolver: loopbackResolver(['pub.test']), ca: TEST_CERT },
      extra: [governanceLists(), testController({ enabled: true })],
    });
    return { seller, remote, front };
  },
  async (w) => {
    await w.seller.close();
    await w.remote.server.close();
    w.front.stop();
  },
  (get) => {
    const list = async (c: TaskClient, account: Record<string, unknown>, ...d: string[]) => {
      const created = await c.call('create_property_list', {
        account,
        name: `Publishers ${d.join(' ')}`,
        base_properties: [{ selection_type: 'identifiers', identifiers: domains(...d) }],
        idempotency_key: key('list'),
      });
      expect(created.ok).toBe(true);
      return { list_id: created.body.list.list_id as string, auth_token: created.body.auth_token as string };
    };
    const buy = (w: SalesWorld, account: Record<string, unknown>, overlay: Record<string, unknown>) => ({
      idempotency_key: key('buy'),
      account,
      start_time: 'asap',
      end_time: new Date(w.clock.now().getTime() + 10 * 24 * HOUR).toISOString(),
      packages: [{ product_id: 'gaming_rewarded_video', pricing_option_id: 'gaming_rewarded_cpm', budget: 5000, targeting_overlay: overlay }],
    });

    test('get_products keeps the products of the listed publishers (property_list_applied); a list of nobody here finds nothing', async () => {
      const w = get().seller;
      const c = await w.client('mcp');
      const account = natural('lists-products.example');
      const own = await list(c, account, 'soundline.example', 'pixelplay.example');
      const ref = { agent_url: `${w.seller.base}/mcp`, list_id: own.list_id };
      const found = await c.call('get_products', { buying_mode: 'brief', brief: 'audio and gaming', property_list: ref });
      expect(bothVersionsErrors('media-buy/get-products-response.json', found.body)).toEqual([]);
      expect(found.body.property_list_applied).toBe(true);
      expect(found.body.products.map((p: { product_id: string }) => p.product_id).sort()).toEqual([
        'audio_streaming_music',
        'gaming_rewarded_video',
        'podcast_true_crime',
      ]);
      const nobody = await list(c, account, 'never-sold-here.example');
      const none = await c.call('get_products', { buying_mode: 'brief', brief: 'anything', property_list: { ...ref, list_id: nobody.list_id } });
      expect(none.body.products).toEqual([]);
      // A list nobody can read: not found, naming the field.
      const unknown = await c.call('get_products', { buying_mode: 'brief', brief: 'x', property_list: { ...ref, list_id: 'pl_nope' } });
      expect(unknown.ok).toBe(false);
      expect(JSON.stringify(unknown.body)).toContain('property_list');
      await c.close();
    });

    test("create_media_buy: a list on the product's publisher delivers; a list naming none of its publishers is booked with a note and delivers nothing", async () => {
      const w = get().seller;
      const c = await w.client('mcp');
      const account = natural('lists-buy.example');
      const mine = await list(c, account, 'pixelplay.example');
      const elsewhere = await list(c, account, 'never-sold-here.example');
      const at = `${w.seller.base}/mcp`;
      const bought = await c.call('create_media_buy', buy(w, account, { property_list: { agent_url: at, list_id: mine.list_id } }));
      expect(bought.ok).toBe(true);
      expect(bought.body.message).toBeUndefined();
      expect(bought.body.packages[0].targeting_overlay.property_list).toEqual({ agent_url: at, list_id: mine.list_id });

      const nowhere = await c.call('create_media_buy', buy(w, account, { property_list: { agent_url: at, list_id: elsewhere.list_id } }));
      expect(nowhere.ok).toBe(true);
      expect(bothVersionsErrors('media-buy/create-media-buy-response.json', nowhere.body)).toEqual([]);
      expect(nowhere.body.message).toContain(`the property list ${elsewhere.list_id} names none of the publishers product gaming_rewarded_video sells`);
      expect(nowhere.body.message).toContain('will deliver nothing');

      // Two days of serving: the first buy delivers, the second nothing.
      for (const b of [bought, nowhere])
        await c.call('comply_test_controller', {
          scenario: 'force_media_buy_status',
          params: { media_buy_id: b.body.media_buy_id, status: 'active' },
          account: { sandbox: true },
        });
      await w.advance(48 * HOUR);
      const delivery = await c.call('get_media_buy_delivery', { media_buy_ids: [bought.body.media_buy_id, nowhere.body.media_buy_id] });
      const byId = new Map(delivery.body.media_buy_deliveries.map((d: any) => [d.media_buy_id, d.totals.impressions]));
      expect(byId.get(bought.body.media_buy_id)).toBeGreaterThan(0);
      expect(byId.get(nowhere.body.media_buy_id)).toBe(0);

      // update_media_buy: swapping the delivering package to the list of nobody says so, and stops its delivery.
      const swapped = await c.call('update_media_buy', {
        idempotency_key: key('upd'),
        media_buy_id: bought.body.media_buy_id,
        packages: [{ package_id: bought.body.packages[0].package_id, targeting_overlay: { property_list: { agent_url: at, list_id: elsewhere.list_id } } }],
      });
      expect(swapped.ok).toBe(true);
      expect(swapped.ok).toBe(true);
      expect(swapped.body.message).toContain('will deliver nothing');
      const kept = (await c.call('get_media_buys', { media_buy_ids: [bought.body.media_buy_id] })).body.media_buys[0];
      expect(kept.packages[0].targeting_overlay.property_list.list_id).toBe(elsewhere.list_id);
      const before = byId.get(bought.body.media_buy_id) as number;
      await w.advance(48 * HOUR);
      const after = await c.call('get_media_buy_delivery', { media_buy_ids: [bought.body.media_buy_id] });
      expect(after.body.media_buy_deliveries[0].totals.impressions).toBeLessThan(before * 1.05);
      // An unknown list is refused, naming the field, and writes nothing.
      const count = (await c.call('get_media_buys', { account })).body.media_buys.length;
      const unknown = await c.call('create_media_buy', buy(w, account, { property_list: { agent_url: at, list_id: 'pl_unknown' } }));
      expect(unknown.ok).toBe(false);
      expect(JSON.stringify(unknown.body)).toContain('packages[0].targeting_overlay.property_list');
      expect((await c.call('get_media_buys', { account })).body.media_buys.length).toBe(count);
      await c.close();
    });

    test("another organization's list: refused without its auth_token, honoured with it", async () => {
      const w = get().seller;
      const owner = await w.client('mcp', OTHER_TOKEN);
      const theirs = await list(owner, natural('lists-owner.example'), 'pixelplay.example');
      await owner.close();
      const c = await w.client('mcp');
      const account = natural('lists-reader.example');
      // Not this deployment's to give away, and the URL names no agent the seller can reach.
      const ref = { agent_url: 'https://governance.invalid/mcp', list_id: theirs.list_id };
      const refused = await c.call('create_media_buy', buy(w, account, { property_list: ref }));
      expect(refused.ok).toBe(false);
      const shared = await c.call('create_media_buy', buy(w, account, { property_list: { ...ref, auth_token: theirs.auth_token } }));
      expect(shared.ok).toBe(true);
      // The token is used, never kept.
      expect(JSON.stringify(shared.body)).not.toContain(theirs.auth_token);
      await c.close();
    });

    test('a remote governance agent: the list is fetched with its auth_token over MCP, cached until its cache_valid_until, then fetched again', async () => {
      const { seller: w, remote, front } = get();
      const gov = await mcpClient(remote.server, GOV_TOKEN);
      const account = natural('lists-remote.example');
      const created = await gov.call('create_property_list', {
        account,
        name: 'Remote publishers',
        base_properties: [{ selection_type: 'identifiers', identifiers: domains('pixelplay.example') }],
        idempotency_key: key('remote'),
      });
      expect(created.ok).toBe(true);
      await gov.close();
      const ref = { agent_url: front.url('lists.pub.test', '/mcp'), list_id: created.body.list.list_id, auth_token: created.body.auth_token };
      const c = await w.client('mcp');
      const first = await c.call('create_media_buy', buy(w, account, { property_list: ref }));
      expect(JSON.stringify(first.body).slice(0, 400)).toContain('media_buy_id');
      // Cached: the agent may be away.
      front.route('lists.pub.test', () => new Response('gone', { status: 503 }));
      expect((await c.call('create_media_buy', buy(w, account, { property_list: ref }))).ok).toBe(true);
      // Past the list's cache_valid_until (24 hours) the seller asks again, and the agent is gone.
      w.clock.advance(25 * HOUR);
      const stale = await c.call('create_media_buy', buy(w, account, { property_list: ref }));
      expect(stale.ok).toBe(false);
      expect(JSON.stringify(stale.body)).toContain('SERVICE_UNAVAILABLE');
      await c.close();
    });
  },
);
