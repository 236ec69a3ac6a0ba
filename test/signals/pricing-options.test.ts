/**
 * Named pricing options and value types of catalog signals: imported from a seed, answered by
 * get_signals (valid in both AdCP versions), accepted by activate_signal by id; a malformed seed is
 * refused naming the field and leaves the catalog as it was.
 */
import { expect, test } from 'bun:test';
import { Database } from '../../core/ports/database.ts';
import { sql } from '../../core/sql.ts';
import { importCatalog } from '../../plugins/signals/catalog.ts';
import { CONFORMANCE_SIGNALS } from '../../plugins/test-agent/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from '../agents/fixture.ts';

forEachDatabase(
  'signal pricing options',
  (adapter, schema) => startSignalsServer(adapter, schema, { env: { PROTOCOL_NAMESPACE: 'adcp' }, signals: { seed: CONFORMANCE_SIGNALS } }),
  (s) => s.server.close(),
  (get) => {
    const s = (): SignalsServer => get();

    test('get_signals shows each named option, the value type and its categories or range', async () => {
      const c = restClient(s().server, TOKEN);
      const found = await c.call('get_signals', { signal_spec: 'loyalty customers churn engagement', max_results: 20 });
      expect(bothVersionsErrors('signals/get-signals-response.json', found.body)).toEqual([]);
      const byId = Object.fromEntries((found.body.signals as any[]).map((x) => [x.signal_agent_segment_id, x]));
      expect(byId.prism_high_ltv.pricing_options).toEqual([
        { pricing_option_id: 'po_prism_flat_monthly', model: 'flat_fee', amount: 5000, period: 'monthly', currency: 'USD' },
      ]);
      expect(byId.prism_churn_risk).toMatchObject({
        value_type: 'categorical',
        categories: ['low_risk', 'medium_risk', 'high_risk', 'churned'],
        pricing_options: [{ pricing_option_id: 'po_prism_churn_pom', model: 'percent_of_media', percent: 12, max_cpm: 3, currency: 'USD' }],
      });
      expect(byId.prism_engagement_score).toMatchObject({ value_type: 'numeric', range: { min: 0, max: 100 } });
      expect(byId.prism_high_ltv.value_type).toBe('binary');
    });

    test('activate_signal takes a named option by id and refuses one the signal does not offer', async () => {
      const c = restClient(s().server, TOKEN);
      const destinations = [{ type: 'platform', platform: 'the-trade-desk', account: 'agency-123-ttd' }];
      const ok = await c.call('activate_signal', {
        idempotency_key: `pricing-options-${Date.now()}-ok`,
        signal_agent_segment_id: 'prism_high_ltv',
        pricing_option_id: 'po_prism_flat_monthly',
        destinations,
      });
      expect(ok.ok).toBe(true);
      expect((ok.body.deployments as any[])[0]).toMatchObject({ type: 'platform', platform: 'the-trade-desk' });
      const wrong = await c.call('activate_signal', {
        idempotency_key: `pricing-options-${Date.now()}-no`,
        signal_agent_segment_id: 'prism_high_ltv',
        pricing_option_id: 'po_prism_abandoner_cpm',
        destinations,
      });
      expect(wrong.ok).toBe(false);
      expect(String(wrong.body.message)).toContain('po_prism_flat_monthly');
    });

    test('a malformed option is refused naming the field, and the catalog is unchanged', async () => {
      const db = s().server.deployment.get(Database);
      const base = { id: 'bad_pricing', name: 'Bad', description: 'Bad pricing', signal_type: 'owned', data_provider: 'Prism', coverage_percentage: 1 };
      for (const [pricing_options, field] of [
        [[{ pricing_option_id: 'a', model: 'flat_fee', amount: 1, currency: 'USD' }], 'period'],
        [
          [
            { pricing_option_id: 'a', model: 'cpm', cpm: 1, currency: 'USD' },
            { pricing_option_id: 'a', model: 'cpm', cpm: 2, currency: 'USD' },
          ],
          'unique',
        ],
        [[{ pricing_option_id: 'a', model: 'auction', currency: 'USD' }], 'model'],
      ] as const) {
        await expect(importCatalog(db, { signals: [{ ...base, pricing_options }] })).rejects.toThrow(field);
      }
      const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM signals WHERE id = 'bad_pricing'`);
      expect(row!.n).toBe(0);
    });
  },
);
