import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { bothVersionsErrors, schemaErrors } from '../support/schemas.ts';
import { startSalesWorld, HOUR, MIN, HMAC_SECRET, type SalesWorld } from './fixture.ts';
import { REFERENCE_AGENT } from './support/reference-formats.ts';

// Every window's data is late by an hour, and every delivered hour is restated 30 minutes after it closes.
forEachDatabase<SalesWorld>(
  'sales late and restated delivery',
  (adapter, schema) =>
    startSalesWorld(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      adServer: { lateProbability: 1, lateMinutes: 60, adjustmentProbability: 1, adjustmentFactor: 0.8, adjustmentLagMinutes: 30, tickMs: 1000 },
    }),
  (w) => w.close(),
  (get) => {
    test('a late window gets `delayed` (partial, reporting_delayed) then `scheduled`; a restated one gets `adjusted`; sequence numbers per buy', async () => {
      const w = get();
      const c = await w.client('rest');
      const acc = (
        await c.call('sync_accounts', {
          idempotency_key: 'late-accounts-000000001',
          accounts: [{ brand: { domain: 'late.example' }, operator: 'late.example', billing: 'agent' }],
        })
      ).body.accounts[0].account_id;
      const created = await c.call('create_media_buy', {
        idempotency_key: 'late-create-0000000001',
        account: { account_id: acc },
        start_time: 'asap',
        end_time: new Date(w.clock.now().getTime() + 4 * HOUR).toISOString(),
        packages: [
          {
            product_id: 'olv_news_preroll',
            pricing_option_id: 'olv_news_cpm_fixed',
            budget: 50_000,
            creatives: [
              {
                creative_id: 'news_spot',
                name: 'News spot',
                format_id: { agent_url: REFERENCE_AGENT, id: 'video_standard_30s' },
                assets: { video: { asset_type: 'video', url: 'https://cdn.late.example/a.mp4', width: 1280, height: 720, duration_ms: 30000 } },
              },
            ],
          },
        ],
        reporting_webhook: {
          url: `${w.buyer.base}/webhooks/reports`,
          authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET },
          reporting_frequency: 'hourly',
        },
      });
      const id = created.body.media_buy_id as string;
      const fires = () =>
        w.events
          .filter((e) => e.payload.task_id === id)
          .map((e) => e.payload.result as any)
          .sort((a, b) => a.sequence_number - b.sequence_number);
      await w.advance(MIN); // active
      // Window 1 closes at +1h; complete after 10 min normally, but late by an hour.
      await w.advance(HOUR + 10 * MIN);
      expect(fires().map((r) => r.notification_type)).toEqual(['delayed']);
      const delayed = fires()[0];
      expect(delayed).toMatchObject({ sequence_number: 1, partial_data: true });
      expect(delayed.media_buy_deliveries[0].status).toBe('reporting_delayed');
      expect(typeof delayed.media_buy_deliveries[0].expected_availability).toBe('string');
      await w.advance(HOUR);
      // The late data of window 1 arrived (scheduled, seq 2); window 2 is late too (delayed, seq 3).
      expect(fires().map((r) => r.notification_type)).toEqual(['delayed', 'scheduled', 'delayed']);
      // The hour the first window ends in is restated 30 minutes after it closes: window 1 again (adjusted, seq 4).
      await w.advance(30 * MIN);
      expect(fires().map((r) => r.notification_type)).toEqual(['delayed', 'scheduled', 'delayed', 'adjusted']);
      const scheduled = fires().find((r) => r.notification_type === 'scheduled');
      const adjusted = fires().find((r) => r.notification_type === 'adjusted');
      expect(adjusted.reporting_period).toEqual(scheduled.reporting_period);
      expect(adjusted.media_buy_deliveries[0].is_adjusted).toBe(true);
      // 20% of the window's traffic removed.
      expect(adjusted.media_buy_deliveries[0].totals.impressions).toBeLessThan(scheduled.media_buy_deliveries[0].totals.impressions);
      // Run the buy to its end and the final report (late too: an hour after the flight).
      await w.advance(4 * HOUR);
      const all = fires();
      expect(all.map((r) => r.sequence_number)).toEqual(all.map((_, i) => i + 1));
      expect(all[all.length - 1].notification_type).toBe('final');
      for (const e of w.events.filter((x) => x.payload.task_id === id)) {
        expect([
          ...bothVersionsErrors('core/mcp-webhook-payload.json', e.payload),
          ...schemaErrors('media-buy/get-media-buy-delivery-response.json', e.payload.result, '3.0.6'),
          ...schemaErrors('media-buy/media-buy-delivery-webhook-result.json', e.payload.result, '3.1.19'),
        ]).toEqual([]);
      }
      // Restatements after the final report send nothing.
      const count = all.length;
      await w.advance(3 * HOUR);
      expect(fires()).toHaveLength(count);
      // Pull with windows: what was finally delivered, restatements included.
      const pulled = await c.call('get_media_buy_delivery', { media_buy_ids: [id], time_granularity: 'hourly', include_window_breakdown: true });
      expect(bothVersionsErrors('media-buy/get-media-buy-delivery-response.json', pulled.body)).toEqual([]);
      const windows = pulled.body.media_buy_deliveries[0].windows;
      expect(windows[0].totals.impressions).toBe(adjusted.media_buy_deliveries[0].totals.impressions);
      expect(windows.reduce((s: number, x: any) => s + x.totals.impressions, 0)).toBe(pulled.body.media_buy_deliveries[0].totals.impressions);
      const unsupported = await c.call('get_media_buy_delivery', { media_buy_ids: [id], time_granularity: 'weekly' });
      expect(unsupported.body.code).toBe('INVALID_REQUEST');
    }, 60_000);
  },
);
