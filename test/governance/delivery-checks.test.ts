import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { clientFor } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { plan, startGovernanceServer, TOKEN, type GovernanceServer } from './fixture.ts';

let n = 0;
const key = () => `gov-delivery-${String(++n).padStart(10, '0')}`;

/** A seller's delivery report (phase `delivery`) on a governed action of the plan. */
function report(planId: string, metrics: Record<string, unknown>) {
  return {
    plan_id: planId,
    caller: 'https://seller.example/mcp',
    phase: 'delivery',
    governance_context: 'gc-delivery',
    delivery_metrics: { reporting_period: { start: '2026-03-01T00:00:00Z', end: '2026-03-11T00:00:00Z' }, ...metrics },
  };
}

forEachDatabase<GovernanceServer>(
  'governance delivery checks',
  (adapter, schema) => startGovernanceServer(adapter, schema),
  (g) => g.server.close(),
  (get) => {
    test('a delivery report is judged on its own figures: pace against the reallocation threshold, flight, budget, channels, countries, mix targets', async () => {
      const c = await clientFor('mcp', get().server, TOKEN);
      // 10,000 USD over March (30 days): by 11 March an even pace has spent a third, 3,333.33.
      const drift = plan('drift', {
        budget: { total: 10_000, currency: 'USD', reallocation_threshold: 1000 },
        channels: { allowed: ['ctv', 'olv', 'display', 'linear_tv'], mix_targets: { ctv: { max_pct: 60 } } },
      });
      expect((await c.call('sync_plans', { idempotency_key: key(), plans: [drift] })).ok).toBe(true);
      const check = async (metrics: Record<string, unknown>) => {
        const res = await c.call('check_governance', report('drift', metrics));
        expect(res.ok).toBe(true);
        expect(bothVersionsErrors('governance/check-governance-response.json', res.body)).toEqual([]);
        return res.body;
      };
      const summary = (b: any) => ({
        status: b.status,
        findings: (b.findings ?? []).map((f: any) => [f.category_id, f.severity]),
        conditions: (b.conditions ?? []).map((x: any) => [x.field, x.required_value]),
      });

      // 666.67 ahead of pace: within the threshold.
      expect(summary(await check({ spend: 4000, cumulative_spend: 4000, channel_distribution: { ctv: 50, olv: 50 } }))).toEqual({
        status: 'approved',
        findings: [],
        conditions: [],
      });
      // 1,666.67 ahead: drift a person must approve.
      const ahead = await check({ cumulative_spend: 5000, pacing: 'ahead' });
      expect(summary(ahead)).toEqual({ status: 'conditions', findings: [['BUDGET_DRIFT_EXCEEDED', 'warning']], conditions: [['human_review', true]] });
      expect(ahead.findings[0].explanation).toContain('1666.67 USD ahead');
      expect(ahead.expires_at).toBeDefined();
      // A channel share over its mix target: rebalance toward it.
      expect(summary(await check({ cumulative_spend: 3000, channel_distribution: { ctv: 80, olv: 20 } }))).toEqual({
        status: 'conditions',
        findings: [['channel_mix', 'warning']],
        conditions: [['channel_distribution.ctv', 60]],
      });
      // Delivered where the plan forbids, or before its flight, or over its budget: denied, findings only.
      expect(summary(await check({ cumulative_spend: 1000, geo_distribution: { US: 90, FR: 10 } }))).toEqual({
        status: 'denied',
        findings: [['geography', 'critical']],
        conditions: [],
      });
      expect(summary(await check({ cumulative_spend: 1000, channel_distribution: { ctv: 50, olv: 40, linear_tv: 10 } }))).toEqual({
        status: 'denied',
        findings: [['policy', 'critical']],
        conditions: [],
      });
      const early = await c.call('check_governance', {
        ...report('drift', {}),
        delivery_metrics: { reporting_period: { start: '2026-02-20T00:00:00Z', end: '2026-02-27T00:00:00Z' }, spend: 2000, cumulative_spend: 2000 },
      });
      expect(summary(early.body)).toEqual({
        status: 'denied',
        findings: [
          ['flight', 'critical'],
          ['BUDGET_DRIFT_EXCEEDED', 'warning'],
        ],
        conditions: [],
      });
      expect(summary(await check({ cumulative_spend: 10_500 }))).toEqual({
        status: 'denied',
        findings: [
          ['budget_authority', 'critical'],
          ['BUDGET_DRIFT_EXCEEDED', 'warning'],
        ],
        conditions: [],
      });

      // Delivery checks commit nothing and are execution checks in the audit log.
      const logs = await c.call('get_plan_audit_logs', { plan_ids: ['drift'], include_entries: true });
      expect(bothVersionsErrors('governance/get-plan-audit-logs-response.json', logs.body)).toEqual([]);
      expect(logs.body.plans[0].budget.committed).toBe(0);
      expect(new Set(logs.body.plans[0].entries.map((e: any) => e.check_type))).toEqual(new Set(['execution']));
      await c.close();
    });

    test('without a reallocation threshold (unlimited) pace is not judged; unscoped policies bound the purchase, not each report', async () => {
      const c = await clientFor('rest', get().server, TOKEN);
      const free = plan('free', {
        custom_policies: [{ policy_id: 'weekly_reports', enforcement: 'must', policy: 'Weekly delivery reporting on every buy' }],
      });
      await c.call('sync_plans', { idempotency_key: key(), plans: [free] });
      const res = await c.call('check_governance', report('free', { cumulative_spend: 9000, pacing: 'ahead' }));
      expect(res.body).toMatchObject({ status: 'approved', policies_evaluated: ['weekly_reports'] });
      expect(res.body.findings).toBeUndefined();
    });
  },
);
