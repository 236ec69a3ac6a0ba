import { expect, test } from 'bun:test';
import { Database } from '../../core/ports/database.ts';
import { injectEvent } from '../../plugins/ad-server-simulated/events.ts';
import { forEachDatabase } from '../support/db.ts';
import { bothVersionsErrors, schemaErrors } from '../support/schemas.ts';
import { startSalesWorld, HOUR, MIN, type SalesWorld } from './fixture.ts';
import { REFERENCE_AGENT } from './support/reference-formats.ts';
import type { TaskClient } from '../support/agent.ts';

let n = 0;
const key = () => `lifecycle-key-${String(++n).padStart(8, '0')}`;
const video = (id: string) => ({
  creative_id: id,
  name: id,
  format_id: { agent_url: REFERENCE_AGENT, id: 'video_ctv_preroll_30s' },
  assets: { video: { asset_type: 'video', url: `https://cdn.acme.example/${id}.mp4`, width: 1920, height: 1080, duration_ms: 30000 } },
});

async function account(c: TaskClient, domain: string): Promise<string> {
  const r = await c.call('sync_accounts', { idempotency_key: key(), accounts: [{ brand: { domain }, operator: domain, billing: 'operator' }] });
  return r.body.accounts[0].account_id;
}

forEachDatabase<SalesWorld>(
  'sales lifecycle',
  (adapter, schema) =>
    startSalesWorld(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      adServer: { approval: { reviewAboveBudget: 50_000, reviewMinutes: 30, rejectAboveBudget: 90_000 } },
      sales: { impairmentCoalesceSeconds: 300 },
    }),
  (w) => w.close(),
  (get) => {
    test('capabilities declare the media-buy protocol, reporting capabilities and idempotency (both versions)', async () => {
      const c = await get().client('mcp');
      const { body } = await c.call('get_adcp_capabilities', {});
      expect(bothVersionsErrors('protocol/get-adcp-capabilities-response.json', body)).toEqual([]);
      expect(body.supported_protocols).toContain('media_buy');
      expect(body.adcp.idempotency).toMatchObject({ supported: true });
      expect(body.media_buy.reporting_capabilities.windowed_pull_granularities).toEqual(['hourly', 'daily', 'monthly']);
      expect(body.media_buy.reporting_delivery_methods).toEqual(['webhook']);
    });

    test('pending_creatives -> pending_start when creatives arrive -> active -> paused <-> active -> canceled, revision on every change, final after cancel', async () => {
      const w = get();
      const c = await w.client('rest');
      const acc = await account(c, 'life.example');
      const start = w.clock.now().getTime() + HOUR;
      const created = await c.call('create_media_buy', {
        idempotency_key: key(),
        account: { account_id: acc },
        start_time: new Date(start).toISOString(),
        end_time: new Date(start + 24 * HOUR).toISOString(),
        packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 8000 }],
        reporting_webhook: {
          url: `${w.buyer.base}/webhooks/reports`,
          authentication: { schemes: ['HMAC-SHA256'], credentials: 'Zk3q9VYt1mXw8s2LpR7uJc4aN6bQe0Hd' },
          reporting_frequency: 'daily',
        },
      });
      expect(created.body).toMatchObject({ media_buy_status: 'pending_creatives', revision: 1 });
      const id = created.body.media_buy_id as string;
      const pkgId = created.body.packages[0].package_id as string;
      expect(created.body.packages[0].format_ids_to_provide.map((f: any) => f.id)).toContain('video_ctv_preroll_30s');

      // The start time passes without creatives: nothing starts.
      await w.advance(2 * HOUR);
      const waiting = await c.call('get_media_buys', { media_buy_ids: [id] });
      expect(waiting.body.media_buys[0]).toMatchObject({ status: 'pending_creatives', revision: 1 });

      const sync = await c.call('sync_creatives', {
        idempotency_key: key(),
        account: { account_id: acc },
        creatives: [video('life_spot')],
        assignments: [{ creative_id: 'life_spot', package_id: pkgId }],
      });
      expect(bothVersionsErrors('creative/sync-creatives-response.json', sync.body)).toEqual([]);
      expect(sync.body.creatives[0]).toMatchObject({ creative_id: 'life_spot', action: 'created', assigned_to: [pkgId] });
      // Same creative again: unchanged.
      const resync = await c.call('sync_creatives', { idempotency_key: key(), account: { account_id: acc }, creatives: [video('life_spot')] });
      expect(resync.body.creatives[0].action).toBe('unchanged');
      // The assets' members in another order are the same creative; a new name updates it, next to a created one.
      const { video: asset } = video('life_spot').assets;
      const reordered = { ...video('life_spot'), assets: { video: Object.fromEntries(Object.entries(asset).reverse()) } };
      const again = await c.call('sync_creatives', { idempotency_key: key(), account: { account_id: acc }, creatives: [reordered] });
      expect(again.body.creatives[0].action).toBe('unchanged');
      const renamed = await c.call('sync_creatives', {
        idempotency_key: key(),
        account: { account_id: acc },
        creatives: [{ ...video('life_spot'), name: 'Life spot' }, video('life_spot_b')],
      });
      expect(renamed.body.creatives.map((x: any) => [x.creative_id, x.action])).toEqual([
        ['life_spot', 'updated'],
        ['life_spot_b', 'created'],
      ]);
      const listed = await c.call('list_creatives', { filters: { media_buy_ids: [id] }, include_assignments: true });
      expect(bothVersionsErrors('creative/list-creatives-response.json', listed.body)).toEqual([]);
      expect(listed.body.creatives.map((x: any) => [x.creative_id, x.assignments.assignment_count])).toEqual([['life_spot', 1]]);

      // Creatives arrived after the start time: the buy starts at the next run.
      await w.advance(MIN);
      let buy = (await c.call('get_media_buys', { media_buy_ids: [id], include_history: 10 })).body.media_buys[0];
      expect(buy).toMatchObject({ status: 'active', revision: 3 });
      expect(buy.history.map((h: any) => h.action)).toEqual(['activated', 'creatives_ready', 'created']);
      expect(buy.valid_actions).toEqual(['pause', 'cancel', 'update_budget', 'update_dates', 'update_packages', 'add_packages', 'sync_creatives']);

      const paused = await c.call('update_media_buy', { idempotency_key: key(), media_buy_id: id, paused: true, revision: 3 });
      // Schemas first: bun's toMatchObject writes asymmetric matchers into the received object.
      expect(bothVersionsErrors('media-buy/update-media-buy-response.json', paused.body)).toEqual([]);
      expect(paused.body).toMatchObject({ media_buy_status: 'paused', revision: 4, valid_actions: expect.arrayContaining(['resume']) });
      // No delivery while paused.
      const during = async () => (await c.call('get_media_buy_delivery', { media_buy_ids: [id] })).body.media_buy_deliveries[0].totals.impressions as number;
      await w.advance(20 * MIN);
      const before = await during();
      await w.advance(3 * HOUR);
      expect(await during()).toBe(before);
      const resumed = await c.call('update_media_buy', { idempotency_key: key(), media_buy_id: id, paused: false });
      expect(resumed.body).toMatchObject({ media_buy_status: 'active', revision: 5 });
      await w.advance(3 * HOUR);
      expect(await during()).toBeGreaterThan(before);

      const budget = await c.call('update_media_buy', { idempotency_key: key(), media_buy_id: id, packages: [{ package_id: pkgId, budget: 9000 }] });
      expect(budget.body).toMatchObject({ revision: 6, total_budget: 9000, affected_packages: [expect.objectContaining({ package_id: pkgId, budget: 9000 })] });

      const canceled = await c.call('update_media_buy', { idempotency_key: key(), media_buy_id: id, canceled: true, cancellation_reason: 'Campaign pulled' });
      expect(canceled.body).toMatchObject({ media_buy_status: 'canceled', revision: 7, valid_actions: [] });
      await w.advance(HOUR);
      buy = (await c.call('get_media_buys', { media_buy_ids: [id] })).body.media_buys[0];
      expect(buy).toMatchObject({ status: 'canceled', cancellation: { canceled_by: 'buyer', reason: 'Campaign pulled' } });
      expect(bothVersionsErrors('media-buy/get-media-buys-response.json', { status: 'completed', media_buys: [buy] })).toEqual([]);
      // The daily window never closed: the final report alone, with the lifetime figures.
      const reports = w.events.filter((e) => e.payload.task_id === id);
      expect(reports.map((e) => (e.payload.result as any).notification_type)).toEqual(['final']);
      expect((reports[0]!.payload.result as any).media_buy_deliveries[0]).toMatchObject({ status: 'canceled' });
      expect((reports[0]!.payload.result as any).media_buy_deliveries[0].totals.impressions).toBeGreaterThan(before);
    }, 60_000);

    test('update_media_buy answers what it stored: a budget rounded to cents, and the promotion when its change leaves every live package with creatives', async () => {
      const w = get();
      const c = await w.client('rest');
      const acc = await account(c, 'promote.example');
      const start = w.clock.now().getTime() + HOUR;
      const pkg = { product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 5000 };
      const created = await c.call('create_media_buy', {
        idempotency_key: key(),
        account: { account_id: acc },
        start_time: new Date(start).toISOString(),
        end_time: new Date(start + 24 * HOUR).toISOString(),
        packages: [pkg, pkg],
      });
      const id = created.body.media_buy_id as string;
      const [a, b] = created.body.packages.map((p: any) => p.package_id as string);
      await c.call('sync_creatives', {
        idempotency_key: key(),
        account: { account_id: acc },
        creatives: [video('promote_spot')],
        assignments: [{ creative_id: 'promote_spot', package_id: a }],
      });
      expect((await c.call('get_media_buys', { media_buy_ids: [id] })).body.media_buys[0]).toMatchObject({ status: 'pending_creatives', revision: 1 });

      // Canceling the package without creatives: updated (revision 2), then ready (revision 3).
      const updated = await c.call('update_media_buy', {
        idempotency_key: key(),
        media_buy_id: id,
        packages: [
          { package_id: b, canceled: true },
          { package_id: a, budget: 6000.126 },
        ],
      });
      expect(bothVersionsErrors('media-buy/update-media-buy-response.json', updated.body)).toEqual([]);
      expect(updated.body).toMatchObject({ media_buy_status: 'pending_start', revision: 3, total_budget: 6000.13 });
      expect(updated.body.affected_packages).toEqual([
        expect.objectContaining({ package_id: a, budget: 6000.13, canceled: false }),
        expect.objectContaining({ package_id: b, budget: 5000, canceled: true }),
      ]);
      expect(updated.body.affected_packages[0].format_ids_to_provide).toBeUndefined();
      const buy = (await c.call('get_media_buys', { media_buy_ids: [id], include_history: 10 })).body.media_buys[0];
      expect(buy).toMatchObject({ status: 'pending_start', revision: 3, total_budget: 6000.13 });
      expect(buy.history.map((h: any) => h.action)).toEqual(['creatives_ready', 'updated', 'created']);
    });

    test('large orders are reviewed: submitted, then completed (task webhook); over the limit, rejected', async () => {
      const w = get();
      const c = await w.client('mcp');
      const acc = await account(c, 'review.example');
      const args = (budget: number) => ({
        idempotency_key: key(),
        account: { account_id: acc },
        start_time: 'asap',
        end_time: new Date(w.clock.now().getTime() + 10 * 24 * HOUR).toISOString(),
        packages: [
          {
            product_id: 'display_ros_standard',
            pricing_option_id: 'display_ros_cpc',
            budget,
            creatives: [
              {
                creative_id: `banner_${budget}`,
                name: 'Banner',
                format_id: { agent_url: REFERENCE_AGENT, id: 'display_300x250_image' },
                assets: { image: { asset_type: 'image', url: 'https://cdn.acme.example/b.png', width: 300, height: 250 } },
              },
            ],
          },
        ],
        push_notification_config: { url: `${w.buyer.base}/webhooks/signed?buy=${budget}`, operation_id: `op-review-${budget}` },
      });
      const first = await c.call('create_media_buy', args(60_000));
      expect(bothVersionsErrors('media-buy/create-media-buy-response.json', first.body)).toEqual([]);
      const taskId = first.body.task_id as string;
      expect(first.body.status).toBe('submitted');
      expect(typeof taskId).toBe('string');
      expect(first.body.media_buy_id).toBeUndefined();
      // Not a confirmed media buy yet: not listed.
      const none = await c.call('get_media_buys', {});
      expect(none.body.media_buys.some((b: any) => b.total_budget === 60_000)).toBe(false);
      await w.advance(10 * MIN);
      expect((await c.poll(taskId)).status).toBe('working');
      await w.advance(25 * MIN);
      const done = await c.poll(taskId);
      expect(done.status).toBe('completed');
      expect(done.result).toMatchObject({ media_buy_status: 'pending_start', revision: 2 });
      expect(bothVersionsErrors('media-buy/create-media-buy-response.json', done.result)).toEqual([]);
      const taskHooks = w.events.filter((e) => e.payload.task_id === taskId);
      expect(taskHooks.map((e) => e.payload.status)).toContain('completed');
      for (const e of taskHooks) expect(bothVersionsErrors('core/mcp-webhook-payload.json', e.payload)).toEqual([]);
      // asap after a review: the flight starts at the confirmation, and the buy starts at the next run.
      await w.advance(MIN);
      const started = w.events.filter((e) => e.payload.task_id === done.result!.media_buy_id);
      expect((started[0]?.payload.result as any)?.media_buy_status).toBe('active');

      const second = await c.call('create_media_buy', args(95_000));
      expect(second.body.status).toBe('submitted');
      await w.advance(40 * MIN);
      const refused = await c.poll(second.body.task_id);
      expect(refused.status).toBe('failed');
      const status = await c.call('get_task_status', { task_id: second.body.task_id });
      expect(status.body.error?.code).toBe('IO_REQUIRED');
      // Rejected before confirmation: listed to 3.1 readers only (3.0 has no null confirmed_at).
      const v30 = await c.call('get_media_buys', { status_filter: 'rejected' });
      expect(v30.body.media_buys).toEqual([]);
      const v31 = await c.call('get_media_buys', { status_filter: 'rejected', adcp_version: '3.1' });
      expect(v31.body.media_buys).toHaveLength(1);
      expect(schemaErrors('media-buy/get-media-buys-response.json', v31.body, '3.1.19')).toEqual([]);
      expect(v31.body.media_buys[0]).toMatchObject({ status: 'rejected', confirmed_at: null });
      expect(v31.body.media_buys[0].rejection_reason).toContain('insertion order');
    }, 60_000);

    test('a 401 from the reporting receiver is transient: retried, and later fires still go there', async () => {
      const w = get();
      const seen: number[] = [];
      const receiver = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        async fetch(req) {
          await req.text();
          seen.push(seen.length);
          return new Response(null, { status: seen.length === 1 ? 401 : 200 });
        },
      });
      try {
        const c = await w.client('rest');
        const acc = await account(c, 'unauthorized.example');
        const created = await c.call('create_media_buy', {
          idempotency_key: key(),
          account: { account_id: acc },
          start_time: 'asap',
          end_time: new Date(w.clock.now().getTime() + 3 * HOUR).toISOString(),
          packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000, creatives: [video('unauth_spot')] }],
          reporting_webhook: {
            url: `http://127.0.0.1:${receiver.port}/reports`,
            authentication: { schemes: ['Bearer'], credentials: 'receiver-bearer-token-0123456789' },
            reporting_frequency: 'hourly',
          },
        });
        const id = created.body.media_buy_id as string;
        await w.settle();
        await w.advance(HOUR + 10 * MIN);
        await w.advance(MIN);
        await w.advance(HOUR);
        const { body } = await c.call('get_media_buys', { media_buy_ids: [id], include_webhook_activity: true });
        const first = body.media_buys[0].webhook_activity
          .filter((r: any) => r.sequence_number === 1)
          .map((r: any) => [r.attempt, r.status, r.http_status_code]);
        expect(first).toEqual([
          [2, 'success', 200],
          [1, 'failed', 401],
        ]);
        expect(body.media_buys[0].webhook_activity.some((r: any) => r.sequence_number === 2 && r.status === 'success')).toBe(true);
      } finally {
        receiver.stop(true);
      }
    }, 60_000);

    test('impairments: general ones coalesced per buy, fraud at once, notification_id reused on re-emission under a new idempotency key', async () => {
      const w = get();
      const c = await w.client('a2a');
      const acc = await account(c, 'impair.example');
      const created = await c.call('create_media_buy', {
        idempotency_key: key(),
        account: { account_id: acc },
        start_time: 'asap',
        end_time: new Date(w.clock.now().getTime() + 48 * HOUR).toISOString(),
        packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000, creatives: [video('imp_spot')] }],
        push_notification_config: { url: `${w.buyer.base}/webhooks/signed?v=1`, operation_id: 'op-impair' },
      });
      const id = created.body.media_buy_id as string;
      const pkgId = created.body.packages[0].package_id as string;
      await w.advance(MIN);
      const db = w.seller.deployment.get(Database);
      const at = (m: number) => new Date(w.clock.now().getTime() + m * MIN);
      const impairment = (resourceId: string, state: 'open' | 'resolved', minutes: number, severity: 'general' | 'fraud' = 'general') =>
        injectEvent(db, {
          type: 'impairment',
          mediaBuyId: id,
          packageIds: [pkgId],
          resourceType: 'creative',
          resourceId,
          severity,
          state,
          offlineState: 'suspended',
          reasonCode: 'policy_violation',
          reason: 'Flagged by policy review',
          observedAt: at(minutes),
        });
      const fires = () => w.events.filter((e) => e.payload.task_id === id && (e.payload.result as any)?.notification_type === 'impairment');

      await impairment('cr_a', 'open', 0);
      await impairment('cr_b', 'open', 1);
      await impairment('cr_a', 'resolved', 2);
      await w.advance(2 * MIN);
      expect(fires()).toHaveLength(0); // inside the coalescing window
      const mid = (await c.call('get_media_buys', { media_buy_ids: [id] })).body.media_buys[0];
      expect(mid.health).toBe('impaired');
      expect(mid.impairments.map((i: any) => i.resource_id)).toEqual(['cr_b']);
      await w.advance(5 * MIN);
      const coalesced = fires();
      // One fire per impairment, each with its latest state: cr_a already resolved, cr_b open.
      expect(coalesced.map((e) => [(e.payload.result as any).impairment.resource_id, !!(e.payload.result as any).impairment.resolved_at]).sort()).toEqual([
        ['cr_a', true],
        ['cr_b', false],
      ]);
      for (const e of coalesced) {
        expect(bothVersionsErrors('core/mcp-webhook-payload.json', e.payload)).toEqual([]);
        expect(schemaErrors('core/impairment.json', (e.payload.result as any).impairment, '3.1.19')).toEqual([]);
        expect(e.payload.notification_id).toBe((e.payload.result as any).impairment.impairment_id);
      }

      await impairment('cr_fraud', 'open', 0, 'fraud');
      await w.advance(0);
      expect(fires().map((e) => (e.payload.result as any).impairment.resource_id)).toContain('cr_fraud');

      // A new push address: open impairments are fired there again, same notification_id, new key.
      const open = fires().filter((e) => !(e.payload.result as any).impairment.resolved_at);
      await c.call('update_media_buy', {
        idempotency_key: key(),
        media_buy_id: id,
        push_notification_config: { url: `${w.buyer.base}/webhooks/signed?v=2`, operation_id: 'op-impair-2' },
      });
      await w.advance(0);
      const again = fires().filter((e) => e.payload.operation_id === 'op-impair-2');
      expect(again.map((e) => e.payload.notification_id).sort()).toEqual(open.map((e) => e.payload.notification_id).sort());
      for (const e of again) {
        expect(e.reemission).toBe(true);
        expect(open.map((o) => o.idempotencyKey)).not.toContain(e.idempotencyKey);
      }
      const listed = await c.call('get_media_buys', { media_buy_ids: [id], include_webhook_activity: true });
      expect(bothVersionsErrors('media-buy/get-media-buys-response.json', listed.body)).toEqual([]);
      expect(listed.body.media_buys[0].webhook_activity.filter((r: any) => r.notification_type === 'impairment')).toHaveLength(fires().length);
    }, 60_000);
  },
);
