import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { HOSTS } from '../support/agent.ts';
import { bothVersionsErrors, schemaErrors } from '../support/schemas.ts';
import { startSalesWorld, HOUR, MIN, HMAC_SECRET, type SalesWorld } from './fixture.ts';
import { REFERENCE_AGENT } from './support/reference-formats.ts';

/**
 * A report envelope must satisfy both versions. The one version difference left: 3.0.6's
 * task-type enum has no delivery value, so reports carry the registering task's type (in both).
 */
function reportErrors(payload: Record<string, any>): string[] {
  return [
    ...bothVersionsErrors('core/mcp-webhook-payload.json', payload),
    ...schemaErrors('media-buy/get-media-buy-delivery-response.json', payload.result, '3.0.6'),
    ...schemaErrors('media-buy/media-buy-delivery-webhook-result.json', payload.result, '3.1.19'),
  ];
}

const spot = (id: string) => ({
  creative_id: id,
  name: `Spot ${id}`,
  format_id: { agent_url: REFERENCE_AGENT, id: 'video_ctv_preroll_30s' },
  assets: { video: { asset_type: 'video', url: `https://cdn.acme.example/${id}.mp4`, width: 1920, height: 1080, duration_ms: 30000 } },
});

forEachDatabase<SalesWorld>(
  'sales end to end',
  (adapter, schema) => startSalesWorld(adapter, schema, { env: { PROTOCOL_NAMESPACE: 'adcp' } }),
  (w) => w.close(),
  (get) => {
    for (const host of HOSTS) {
      test(`${host}: products -> account -> create (replay, conflict) -> start webhook -> hourly reports -> update -> final, then nothing; webhook activity`, async () => {
        const w = get();
        const c = await w.client(host);
        const brand = `${host}-brand.example`;

        // Products for a brief, best match first.
        const products = await c.call('get_products', { buying_mode: 'brief', brief: 'premium live sports on connected TV' });
        expect(products.ok).toBe(true);
        expect(bothVersionsErrors('media-buy/get-products-response.json', products.body)).toEqual([]);
        expect(products.body.products[0].product_id).toBe('ctv_sports_premium');
        const product = products.body.products[0];
        const option = product.pricing_options[0];
        expect(option).toMatchObject({ pricing_option_id: 'ctv_sports_cpm_fixed', pricing_model: 'cpm', currency: 'USD', fixed_price: 42 });

        // An account; sync is idempotent.
        const syncArgs = { idempotency_key: `${host}-accounts-0000000001`, accounts: [{ brand: { domain: brand }, operator: brand, billing: 'operator' }] };
        const synced = await c.call('sync_accounts', syncArgs);
        expect(bothVersionsErrors('account/sync-accounts-response.json', synced.body)).toEqual([]);
        expect(synced.body.accounts[0]).toMatchObject({ action: 'created', status: 'active' });
        const again = await c.call('sync_accounts', { ...syncArgs, idempotency_key: `${host}-accounts-0000000002` });
        expect(again.body.accounts[0]).toMatchObject({ action: 'unchanged', account_id: synced.body.accounts[0].account_id });
        const accountId = synced.body.accounts[0].account_id as string;
        const listed = await c.call('list_accounts', {});
        expect(bothVersionsErrors('account/list-accounts-response.json', listed.body)).toEqual([]);
        expect(listed.body.accounts.map((a: any) => a.account_id)).toContain(accountId);

        // Create: one package of the product, a creative inline; start in an hour, six hours of flight.
        const start = w.clock.now().getTime() + HOUR;
        const create = {
          idempotency_key: `${host}-create-000000000001`,
          account: { account_id: accountId },
          brand: { domain: brand },
          start_time: new Date(start).toISOString(),
          end_time: new Date(start + 6 * HOUR).toISOString(),
          packages: [{ product_id: product.product_id, pricing_option_id: option.pricing_option_id, budget: 6000, creatives: [spot(`${host}_spot`)] }],
          push_notification_config: { url: `${w.buyer.base}/webhooks/signed`, operation_id: `${host}-op-1` },
          reporting_webhook: {
            url: `${w.buyer.base}/webhooks/reports`,
            authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET },
            reporting_frequency: 'hourly',
          },
          context: { trace: host },
        };
        expect(bothVersionsErrors('media-buy/create-media-buy-request.json', create)).toEqual([]);
        const created = await c.call('create_media_buy', create);
        expect(created.ok).toBe(true);
        expect(bothVersionsErrors('media-buy/create-media-buy-response.json', created.body)).toEqual([]);
        expect(created.body).toMatchObject({
          status: 'completed',
          media_buy_status: 'pending_start',
          revision: 1,
          sandbox: false,
          valid_actions: expect.arrayContaining(['cancel', 'sync_creatives']),
        });
        const buyId = created.body.media_buy_id as string;
        const mine = () => w.events.filter((e) => e.payload.task_id === buyId);

        const replay = await c.call('create_media_buy', create);
        expect(replay.body).toMatchObject({ media_buy_id: buyId, replayed: true });
        const conflict = await c.call('create_media_buy', { ...create, packages: [{ ...create.packages[0], budget: 7000 }] });
        expect(conflict.ok).toBe(false);
        expect(conflict.body.code ?? conflict.body.errors?.[0]?.code).toBe('IDEMPOTENCY_CONFLICT');

        // Start time: active, and the buyer gets one signed (RFC 9421) webhook.
        await w.advance(HOUR);
        const started = mine();
        expect(started.map((e) => e.endpoint)).toEqual(['signed']);
        expect(started[0]!.sender).toBe('sales');
        expect(bothVersionsErrors('core/mcp-webhook-payload.json', started[0]!.payload)).toEqual([]);
        expect(started[0]!.payload).toMatchObject({ operation_id: `${host}-op-1`, task_type: 'create_media_buy', context: { trace: host } });
        expect((started[0]!.payload.result as any).media_buy_status).toBe('active');

        // First report: the receiver is down, then back; the retry delivers the same fire.
        w.receiver.down = true;
        await w.advance(HOUR + 10 * MIN);
        expect(mine().filter((e) => e.endpoint === 'reports')).toHaveLength(0);
        w.receiver.down = false;
        await w.advance(MIN);
        await w.advance(HOUR);
        // Fires are delivered concurrently (no ordering guarantee): order them by sequence number.
        const seqOf = (e: { payload: Record<string, unknown> }) => (e.payload.result as any).sequence_number as number;
        const reports = () =>
          mine()
            .filter((e) => e.endpoint.startsWith('reports'))
            .sort((a, b) => seqOf(a) - seqOf(b));
        expect(reports().map((e) => (e.payload.result as any).sequence_number)).toEqual([1, 2]);

        // New reporting URL: used from the next fire on.
        const update = {
          idempotency_key: `${host}-update-000000000001`,
          account: { account_id: accountId },
          media_buy_id: buyId,
          revision: 2,
          reporting_webhook: {
            url: `${w.buyer.base}/webhooks/reports2`,
            authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET },
            reporting_frequency: 'hourly',
          },
        };
        expect(bothVersionsErrors('media-buy/update-media-buy-request.json', update)).toEqual([]);
        const updated = await c.call('update_media_buy', update);
        expect(updated.ok).toBe(true);
        expect(bothVersionsErrors('media-buy/update-media-buy-response.json', updated.body)).toEqual([]);
        expect(updated.body).toMatchObject({ media_buy_id: buyId, media_buy_status: 'active', revision: 3 });

        // The rest of the flight, then completion and the final report.
        await w.advance(4 * HOUR);
        await w.advance(HOUR);
        const all = reports();
        const types = all.map((e) => (e.payload.result as any).notification_type);
        expect(types).toEqual(['scheduled', 'scheduled', 'scheduled', 'scheduled', 'scheduled', 'scheduled', 'final']);
        expect(all.map((e) => (e.payload.result as any).sequence_number)).toEqual([1, 2, 3, 4, 5, 6, 7]);
        expect(all.map((e) => e.endpoint)).toEqual(['reports', 'reports', 'reports2', 'reports2', 'reports2', 'reports2', 'reports2']);
        for (const e of all) {
          expect(reportErrors(e.payload)).toEqual([]);
          expect(e.payload.notification_id).toBeUndefined();
          expect((e.payload.result as any).aggregated_totals).toBeUndefined();
          // The task type of the call that registered the channel in force.
          expect(e.payload.task_type).toBe(e.endpoint === 'reports' ? 'create_media_buy' : 'update_media_buy');
        }
        // Windows partition the flight; the final carries the lifetime totals.
        const scheduled = all.slice(0, 6).map((e) => e.payload.result as any);
        for (const [i, r] of scheduled.entries()) {
          expect(r.reporting_period).toEqual({ start: new Date(start + i * HOUR).toISOString(), end: new Date(start + (i + 1) * HOUR).toISOString() });
        }
        const final = all[6]!.payload.result as any;
        expect(final.media_buy_deliveries[0].status).toBe('completed');
        expect(final.media_buy_deliveries[0].totals.impressions).toBe(scheduled.reduce((s, r) => s + r.media_buy_deliveries[0].totals.impressions, 0));
        expect(scheduled[0].media_buy_deliveries[0].totals.impressions).toBeGreaterThan(0);
        // Delivery stops at the budget, whenever the daily curve gets there.
        expect(final.media_buy_deliveries[0].totals.spend).toBeLessThanOrEqual(6000);

        // Nothing fires after the final report.
        const count = mine().length;
        await w.advance(6 * HOUR);
        expect(mine()).toHaveLength(count);

        // The buy, its webhook activity (the first report: attempt 1 failed, attempt 2 succeeded).
        const buys = await c.call('get_media_buys', { media_buy_ids: [buyId], include_webhook_activity: true, include_history: 10, adcp_version: '3.1' });
        expect(bothVersionsErrors('media-buy/get-media-buys-response.json', buys.body)).toEqual([]);
        const buy = buys.body.media_buys[0];
        expect(buy).toMatchObject({ media_buy_id: buyId, status: 'completed', revision: 4, health: 'ok', impairments: [] });
        const first = buy.webhook_activity.filter((r: any) => r.sequence_number === 1);
        expect(first.map((r: any) => [r.attempt, r.status, r.http_status_code])).toEqual([
          [2, 'success', 200],
          [1, 'failed', 500],
        ]);
        expect(first[0].idempotency_key).toBe(first[1].idempotency_key);
        expect(buy.webhook_activity.find((r: any) => r.notification_type === 'final')).toMatchObject({ status: 'success', sequence_number: 7 });

        // Pulled windows equal the pushed ones (a buyer recovers missed fires this way).
        const pulled = await c.call('get_media_buy_delivery', { media_buy_ids: [buyId], time_granularity: 'hourly', include_window_breakdown: true });
        expect(bothVersionsErrors('media-buy/get-media-buy-delivery-response.json', pulled.body)).toEqual([]);
        const windows = pulled.body.media_buy_deliveries[0].windows;
        expect(windows.map((x: any) => x.totals.impressions)).toEqual(scheduled.map((r) => r.media_buy_deliveries[0].totals.impressions));
        expect(pulled.body.aggregated_totals.impressions).toBe(final.media_buy_deliveries[0].totals.impressions);
        await c.close();
      }, 60_000);
    }
  },
);
