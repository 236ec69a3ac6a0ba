import { expect, test } from 'bun:test';
import testController from '../../plugins/test-controller/index.ts';
import { forEachDatabase } from '../support/db.ts';
import type { TaskClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { HOUR, OTHER_TOKEN, startSalesWorld, type SalesWorld } from './fixture.ts';

let n = 0;
const key = (p: string) => `${p}-conformance-${String(++n).padStart(8, '0')}`;
const natural = (brand: string) => ({ brand: { domain: brand }, operator: 'pinnacle-agency.example' });

/**
 * What the official AdCP storyboards showed (issue: conformance): natural-key accounts on a
 * sandbox seller, fixtures seeded through comply_test_controller, version negotiation, measurement
 * terms, and the 3.0 reading of a create answer's `status`.
 */
forEachDatabase<SalesWorld>(
  'sales conformance fixes',
  (adapter, schema) =>
    startSalesWorld(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      sales: { sandbox: true },
      extra: [testController({ enabled: true })],
    }),
  (w) => w.close(),
  (get) => {
    const control = (c: TaskClient, scenario: string, params: Record<string, unknown>, account?: Record<string, unknown>) =>
      c.call('comply_test_controller', { scenario, params, ...(account ? { account } : {}) });
    const buy = (w: SalesWorld, account: Record<string, unknown>, extra: Record<string, unknown> = {}, pkg: Record<string, unknown> = {}) => ({
      idempotency_key: key('buy'),
      account,
      start_time: 'asap',
      end_time: new Date(w.clock.now().getTime() + 24 * HOUR).toISOString(),
      packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000, ...pkg }],
      ...extra,
    });

    test('a sandbox seller finds a synced account however the sandbox flag is spelled, and provisions an unknown natural key on a write', async () => {
      const w = get();
      const c = await w.client('mcp');
      const synced = await c.call('sync_accounts', {
        idempotency_key: key('sync'),
        accounts: [{ ...natural('acmeoutdoor.example'), billing: 'operator' }],
      });
      const accountId = synced.body.accounts[0].account_id;
      for (const ref of [natural('acmeoutdoor.example'), { ...natural('acmeoutdoor.example'), sandbox: true }]) {
        const listed = await c.call('get_media_buys', { account: ref });
        expect(listed.ok).toBe(true);
      }
      // No sync first: products need no account, and the buy provisions it.
      expect((await c.call('get_products', { buying_mode: 'brief', brief: 'sports', account: natural('never-synced.example') })).ok).toBe(true);
      const created = await c.call('create_media_buy', buy(w, natural('never-synced.example')));
      expect(created.ok).toBe(true);
      const accounts = await c.call('list_accounts', {});
      const domains = accounts.body.accounts.map((a: { brand: { domain: string } }) => a.brand.domain).sort();
      expect(domains).toEqual(['acmeoutdoor.example', 'never-synced.example']);
      expect(accounts.body.accounts.find((a: { account_id: string }) => a.account_id === accountId).sandbox).toBe(true);
      // An account_id is never invented.
      expect((await c.call('create_media_buy', buy(w, { account_id: 'acc_nobody' }))).body.code).toBe('ACCOUNT_NOT_FOUND');
      await c.close();
    });

    // 3.1.19 joins the envelope (status: a TaskStatus) with the success arm (status: a MediaBuyStatus), so
    // only `completed` is valid in both versions; the buy's state is media_buy_status.
    test('create_media_buy: status is the task status valid in both versions, the buy state media_buy_status; a replay completes', async () => {
      const w = get();
      const c = await w.client('mcp');
      const args = buy(w, natural('status.example'));
      const created = await c.call('create_media_buy', args);
      expect(created.body.status).toBe('completed');
      expect(['pending_creatives', 'pending_start', 'active']).toContain(created.body.media_buy_status);
      expect(bothVersionsErrors('media-buy/create-media-buy-response.json', created.body)).toEqual([]);
      const replay = await c.call('create_media_buy', args);
      expect(replay.ok).toBe(true);
      expect(replay.body.replayed).toBe(true);
      await c.close();
    });

    test('re-cancelling a canceled buy is NOT_CANCELLABLE; simulate_delivery starts a buy that is not serving yet', async () => {
      const w = get();
      const c = await w.client('rest');
      const first = await c.call('create_media_buy', buy(w, natural('cancel.example')));
      const id = first.body.media_buy_id;
      const cancel = () => c.call('update_media_buy', { idempotency_key: key('cancel'), media_buy_id: id, canceled: true });
      expect((await cancel()).ok).toBe(true);
      expect((await cancel()).body.code).toBe('NOT_CANCELLABLE');
      const pending = (await c.call('create_media_buy', buy(w, natural('cancel.example')))).body;
      expect(pending.media_buy_status).toBe('pending_creatives');
      const delivered = await control(c, 'simulate_delivery', { media_buy_id: pending.media_buy_id, impressions: 1000, clicks: 3 });
      expect(delivered.body).toMatchObject({ success: true, simulated: { impressions: 1000, clicks: 3 } });
      expect((await c.call('get_media_buys', { media_buy_ids: [pending.media_buy_id] })).body.media_buys[0].status).toBe('active');
      await c.close();
    });

    // On PGlite (one connection) an account read still running when the update's transaction opened
    // waited for that transaction, which waited for it: the call never answered.
    test('update_media_buy naming an account not yet read (provisioned on first reference) answers, refusal or change', async () => {
      const w = get();
      const c = await w.client('mcp');
      const id = (await c.call('create_media_buy', buy(w, natural('refs-a.example')))).body.media_buy_id;
      const pause = await c.call('update_media_buy', { idempotency_key: key('pause'), media_buy_id: id, paused: true, account: natural('refs-b.example') });
      expect(pause.ok).toBe(true);
      expect(
        (await c.call('update_media_buy', { idempotency_key: key('cancel'), media_buy_id: id, canceled: true, account: natural('refs-c.example') })).ok,
      ).toBe(true);
      const refused = await c.call('update_media_buy', { idempotency_key: key('pause'), media_buy_id: id, paused: true, account: natural('refs-d.example') });
      expect(refused.body.code).toBe('INVALID_STATE');
      await c.close();
    });

    test("creative formats: a product's own format is known without its agent; a sandbox takes .example agents as given", async () => {
      const w = get();
      const c = await w.client('mcp');
      await control(c, 'seed_product', {
        product_id: 'fmt_product',
        fixture: { format_ids: [{ agent_url: 'https://formats.unreachable.test/', id: 'house_banner' }] },
      });
      const creative = (agent: string, id: string, creative_id: string) => ({
        creative_id,
        name: creative_id,
        format_id: { agent_url: agent, id },
        assets: { image: { asset_type: 'image', url: `https://cdn.acme.example/${creative_id}.png`, width: 300, height: 250 } },
      });
      const synced = await c.call('sync_creatives', {
        idempotency_key: key('sync'),
        account: natural('formats.example'),
        creatives: [
          creative('https://formats.unreachable.test/', 'house_banner', 'c_house'),
          creative('https://your-platform.example.com', 'native_card', 'c_example'),
        ],
      });
      expect(synced.body.errors ?? synced.body.code ?? null).toBeNull();
      expect(synced.ok).toBe(true);
      expect(synced.body.creatives.map((x: { action: string }) => x.action)).toEqual(['created', 'created']);
      await c.close();
    });

    test('content_id_type names the kind of id the items carry: items identified by item_id are accepted', async () => {
      const w = get();
      const c = await w.client('mcp');
      const item = (id: string, price: number) => ({
        item_id: id,
        title: id,
        url: `https://acmeoutdoor.example/gear/${id}`,
        price: { amount: price, currency: 'USD' },
      });
      const synced = await c.call('sync_catalogs', {
        idempotency_key: key('catalog'),
        account: natural('catalogs.example'),
        catalogs: [
          {
            catalog_id: 'spring_gear',
            type: 'product',
            content_id_type: 'sku',
            name: 'Spring gear',
            items: [item('trail_pro_3000', 289), item('summit_tent_2p', 549)],
          },
        ],
      });
      expect(synced.body.catalogs[0]).toMatchObject({ catalog_id: 'spring_gear', item_count: 2, items_rejected: 0 });
      // An item with no id at all is still rejected, naming the field the catalog declared.
      const bad = await c.call('sync_catalogs', {
        idempotency_key: key('catalog'),
        account: natural('catalogs.example'),
        catalogs: [
          {
            catalog_id: 'no_ids',
            type: 'product',
            content_id_type: 'sku',
            name: 'No ids',
            items: [{ title: 'Nameless', url: 'https://acmeoutdoor.example/x', price: { amount: 1, currency: 'USD' } }],
          },
        ],
      });
      expect(bad.body.catalogs[0].item_issues[0].reasons[0]).toContain('sku');
      await c.close();
    });

    test('an unsupported adcp_major_version is VERSION_UNSUPPORTED, before any other check', async () => {
      const c = await get().client('rest');
      const r = await c.call('get_products', { adcp_major_version: 99, buying_mode: 'brief', brief: 'x' });
      expect(r.ok).toBe(false);
      expect(r.body.code).toBe('VERSION_UNSUPPORTED');
      expect((await c.call('get_products', { adcp_major_version: 3, buying_mode: 'brief', brief: 'sports' })).ok).toBe(true);
      await c.close();
    });

    test('measurement terms outside the seller tolerance are TERMS_REJECTED and nothing is written; relaxed terms buy', async () => {
      const w = get();
      const c = await w.client('a2a');
      const before = (await c.call('get_media_buys', {})).body.media_buys.length;
      const aggressive = { billing_measurement: { vendor: { domain: 'videoamp.example' }, measurement_window: 'c30', max_variance_percent: 0 } };
      const refused = await c.call('create_media_buy', buy(w, natural('terms.example'), {}, { measurement_terms: aggressive }));
      expect(refused.body.code).toBe('TERMS_REJECTED');
      expect(refused.body.message).toContain('c30');
      expect((await c.call('get_media_buys', {})).body.media_buys.length).toBe(before);
      const relaxed = { billing_measurement: { vendor: { domain: 'videoamp.example' }, measurement_window: 'c7', max_variance_percent: 10 } };
      expect((await c.call('create_media_buy', buy(w, natural('terms.example'), {}, { measurement_terms: relaxed }))).ok).toBe(true);
      await c.close();
    });

    test('seed_product and seed_pricing_option make a product a buyer finds and buys; seed_media_buy and seed_creative belong to the caller', async () => {
      const w = get();
      const c = await w.client('mcp');
      const account = { ...natural('fixtures.example'), sandbox: true };
      const seeded = await control(c, 'seed_product', {
        product_id: 'outdoor_video_q2',
        fixture: { delivery_type: 'guaranteed', channels: ['video'], format_ids: [{ id: 'video_15s' }] },
      });
      expect(seeded.body).toMatchObject({ success: true });
      expect(
        (
          await control(c, 'seed_pricing_option', {
            product_id: 'outdoor_video_q2',
            pricing_option_id: 'cpm_standard',
            fixture: { pricing_model: 'cpm', currency: 'USD', fixed_price: 12 },
          })
        ).body,
      ).toMatchObject({ success: true });
      const found = await c.call('get_products', { buying_mode: 'brief', brief: 'outdoor video' });
      const product = found.body.products.find((p: { product_id: string }) => p.product_id === 'outdoor_video_q2');
      expect(product.channels).toEqual(['olv']);
      expect(product.pricing_options.map((o: { pricing_option_id: string }) => o.pricing_option_id)).toEqual(['cpm_standard']);
      const bought = await c.call('create_media_buy', buy(w, account, {}, { product_id: 'outdoor_video_q2', pricing_option_id: 'cpm_standard', budget: 5000 }));
      expect(bought.ok).toBe(true);
      // Another caller neither finds nor buys the fixture.
      const stranger = await w.client('mcp', OTHER_TOKEN);
      const theirs = await stranger.call('get_products', { buying_mode: 'brief', brief: 'outdoor video' });
      expect(theirs.body.products.some((p: { product_id: string }) => p.product_id === 'outdoor_video_q2')).toBe(false);
      const refused = await stranger.call(
        'create_media_buy',
        buy(
          w,
          { ...natural('other-fixtures.example'), sandbox: true },
          {},
          { product_id: 'outdoor_video_q2', pricing_option_id: 'cpm_standard', budget: 5000 },
        ),
      );
      expect(refused.ok).toBe(false);
      expect(JSON.stringify(refused.body)).toContain('PRODUCT_NOT_FOUND');
      await stranger.close();
      // A malformed fixture is refused in band and writes nothing.
      expect((await control(c, 'seed_product', { product_id: 'bad_one', fixture: { delivery_type: 'sometimes' } })).body).toMatchObject({
        success: false,
        error: 'INVALID_PARAMS',
      });
      expect(
        (await c.call('get_products', { buying_mode: 'brief', brief: 'bad one' })).body.products.some(
          (p: { product_id: string }) => p.product_id === 'bad_one',
        ),
      ).toBe(false);

      expect(
        (await control(c, 'seed_media_buy', { media_buy_id: 'fixture_mb_1', fixture: { status: 'active', currency: 'USD', budget: { total: 4000 } } }, account))
          .body,
      ).toMatchObject({ success: true });
      const listed = await c.call('get_media_buys', { media_buy_ids: ['fixture_mb_1'] });
      expect(listed.body.media_buys[0]).toMatchObject({ media_buy_id: 'fixture_mb_1', status: 'active', total_budget: 4000 });
      expect(
        (
          await control(
            c,
            'seed_creative',
            { creative_id: 'fixture_creative_1', fixture: { status: 'approved', format_id: { id: 'display_static' } } },
            account,
          )
        ).body,
      ).toMatchObject({ success: true });
      const creatives = await c.call('list_creatives', { filters: { creative_ids: ['fixture_creative_1'] } });
      expect(creatives.body.creatives.map((x: { creative_id: string }) => x.creative_id)).toEqual(['fixture_creative_1']);
      // Without an account a buyer fixture has no owner to belong to.
      expect((await control(c, 'seed_media_buy', { media_buy_id: 'fixture_mb_2' })).body).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
      // Another caller cannot take over a fixture id.
      const other = await w.client('mcp', OTHER_TOKEN);
      expect((await control(other, 'seed_media_buy', { media_buy_id: 'fixture_mb_1' }, account)).body).toMatchObject({
        success: false,
        error: 'INVALID_PARAMS',
      });
      expect((await other.call('get_media_buys', { media_buy_ids: ['fixture_mb_1'] })).body.media_buys).toEqual([]);
      await other.close();
      await c.close();
    });
  },
);
