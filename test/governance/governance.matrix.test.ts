import { beforeAll, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { clientFor, HOSTS, type TaskClient } from '../support/agent.ts';
import { bothVersionsErrors, schemaErrors } from '../support/schemas.ts';
import { OTHER_TOKEN, plan, proposal, startGovernanceServer, TOKEN, type GovernanceServer } from './fixture.ts';

let n = 0;
const key = (host: string) => `gov-${host}-${String(++n).padStart(10, '0')}`;

forEachDatabase<GovernanceServer>(
  'governance matrix',
  (adapter, schema) => startGovernanceServer(adapter, schema),
  (g) => g.server.close(),
  (get) => {
    for (const host of HOSTS) {
      test(`${host}: plans, approved / with conditions / denied checks, outcomes and the audit log, valid in both versions`, async () => {
        const c = await clientFor(host, get().server, TOKEN);
        const planId = `${host}-spring`;
        const sync = { idempotency_key: key(host), plans: [plan(planId)] };
        expect(bothVersionsErrors('governance/sync-plans-request.json', sync)).toEqual([]);
        const synced = await c.call('sync_plans', sync);
        expect(synced.ok).toBe(true);
        expect(bothVersionsErrors('governance/sync-plans-response.json', synced.body)).toEqual([]);
        expect(synced.body.plans).toEqual([
          {
            plan_id: planId,
            status: 'active',
            version: 1,
            resolved_policies: [{ policy_id: 'no_linear_tv', source: 'explicit', enforcement: 'must', reason: 'Inline policy of the plan' }],
          },
        ]);
        // The same plan again keeps its version; a change makes the next one.
        expect((await c.call('sync_plans', { idempotency_key: key(host), plans: [plan(planId)] })).body.plans[0].version).toBe(1);
        expect(
          (await c.call('sync_plans', { idempotency_key: key(host), plans: [plan(planId, { objectives: 'Spring awareness and sales' })] })).body.plans[0]
            .version,
        ).toBe(2);

        // Within the plan: approved.
        const small = proposal(planId, 2000);
        expect(bothVersionsErrors('governance/check-governance-request.json', small)).toEqual([]);
        const approved = await c.call('check_governance', small);
        expect(approved.ok).toBe(true);
        expect(bothVersionsErrors('governance/check-governance-response.json', approved.body)).toEqual([]);
        expect(approved.body).toMatchObject({ status: 'approved', verdict: 'approved', plan_id: planId, expires_at: '2026-03-02T01:00:00.000Z' });
        expect(approved.body.conditions).toBeUndefined();

        // More than 60% of the budget with one seller: approved with conditions.
        const big = await c.call('check_governance', proposal(planId, 7000));
        expect(bothVersionsErrors('governance/check-governance-response.json', big.body)).toEqual([]);
        expect(big.body).toMatchObject({ status: 'conditions', verdict: 'conditions', conditions: [{ field: 'total_budget', required_value: 6000 }] });

        // The seller commits it: 3,000 left.
        const report = {
          idempotency_key: key(host),
          plan_id: planId,
          check_id: big.body.check_id,
          outcome: 'completed',
          governance_context: big.body.governance_context,
          seller_response: { seller_reference: 'mb_1', committed_budget: 7000 },
        };
        expect(bothVersionsErrors('governance/report-plan-outcome-request.json', report)).toEqual([]);
        const reported = await c.call('report_plan_outcome', report);
        expect(bothVersionsErrors('governance/report-plan-outcome-response.json', reported.body)).toEqual([]);
        expect(reported.body).toMatchObject({
          status: 'accepted',
          outcome_state: 'accepted',
          committed_budget: 7000,
          plan_summary: { total_committed: 7000, budget_remaining: 3000 },
        });

        // Over what is left, on a channel the plan refuses, in a market outside it: denied with a finding for each.
        const denied = await c.call(
          'check_governance',
          proposal(planId, 5000, { planned_delivery: { total_budget: 5000, currency: 'USD', channels: ['linear_tv'], geo: { countries: ['FR'] } } }),
        );
        expect(denied.ok).toBe(true);
        expect(bothVersionsErrors('governance/check-governance-response.json', denied.body)).toEqual([]);
        expect(denied.body.status).toBe('denied');
        expect(denied.body.expires_at).toBeUndefined();
        expect(denied.body.findings.map((f: any) => [f.category_id, f.severity, f.policy_id])).toEqual([
          ['budget_authority', 'critical', undefined],
          ['channel_mix', 'critical', undefined],
          ['geography', 'critical', undefined],
          ['policy', 'critical', 'no_linear_tv'],
        ]);

        // The audit log: budget, counts, governed actions and every entry in order.
        const logs = await c.call('get_plan_audit_logs', { plan_ids: [planId], include_entries: true });
        expect(bothVersionsErrors('governance/get-plan-audit-logs-response.json', logs.body)).toEqual([]);
        const [p] = logs.body.plans;
        expect(p).toMatchObject({
          plan_id: planId,
          plan_version: 2,
          status: 'active',
          budget: { authorized: 10_000, committed: 7000, remaining: 3000, utilization_pct: 70 },
          summary: { checks_performed: 3, outcomes_reported: 1, statuses: { approved: 1, conditions: 1, denied: 1, human_reviewed: 0 }, findings_count: 4 },
        });
        expect(p.entries.map((e: any) => e.type)).toEqual(['check', 'check', 'outcome', 'check']);
        expect(p.entries.map((e: any) => e.explanation?.split(':')[0])).toEqual(['Approved', 'Approved with conditions', undefined, 'Denied']);
        expect(p.governed_actions.find((a: any) => a.seller_reference === 'mb_1')).toMatchObject({ committed: 7000, check_count: 1 });
        // A caller pinning 3.1 reads each decision as `verdict` (3.0 entries have no such member, and 3.1 none of `status`).
        const v31 = await c.call('get_plan_audit_logs', { plan_ids: [planId], include_entries: true, adcp_version: '3.1' });
        expect(schemaErrors('governance/get-plan-audit-logs-response.json', v31.body, '3.1.19')).toEqual([]);
        expect(v31.body.plans[0].entries.filter((e: any) => e.type === 'check').map((e: any) => e.verdict)).toEqual(['approved', 'conditions', 'denied']);
        await c.close();
      });
    }

    test("plans are the caller organization's: another caller finds none", async () => {
      const c = await clientFor('mcp', get().server, TOKEN);
      await c.call('sync_plans', { idempotency_key: key('own'), plans: [plan('private-plan')] });
      const other = await clientFor('rest', get().server, OTHER_TOKEN);
      const check = await other.call('check_governance', proposal('private-plan', 100));
      expect({ ok: check.ok, code: check.body.code, field: check.body.field }).toEqual({ ok: false, code: 'PLAN_NOT_FOUND', field: 'plan_id' });
      expect((await other.call('get_plan_audit_logs', { plan_ids: ['private-plan'] })).body.plans).toEqual([]);
      await c.close();
    });

    test('modes other than enforce approve and keep the findings', async () => {
      // The plugin's mode is the deployment's; the evaluation itself is what differs.
      const { evaluate } = await import('../../plugins/governance/evaluate.ts');
      const p = plan('p') as any;
      const over = { caller: 'https://s.example', amount: 50_000, currency: 'USD', channels: ['ctv'], countries: ['US'] };
      expect(evaluate(p, 'active', 0, over, 'enforce', new Date('2026-03-02T00:00:00Z')).status).toBe('denied');
      const advisory = evaluate(p, 'active', 0, over, 'advisory', new Date('2026-03-02T00:00:00Z'));
      expect(advisory.status).toBe('approved');
      expect(advisory.findings[0]!.severity).toBe('critical');
      expect(advisory.explanation).toStartWith('Approved (advisory mode, not enforced)');
    });

    const TABLES = ['governance_plans', 'governance_checks', 'governance_outcomes', 'idempotency_keys'];
    const CASES: Array<{ name: string; task: string; args: () => Record<string, unknown>; code: string; field: string }> = [
      {
        name: 'sync_plans without idempotency_key',
        task: 'sync_plans',
        args: () => ({ plans: [plan('x')] }),
        code: 'INVALID_REQUEST',
        field: 'idempotency_key',
      },
      {
        name: 'plan without budget',
        task: 'sync_plans',
        args: () => ({ idempotency_key: key('bad'), plans: [{ ...plan('x'), budget: undefined }] }),
        code: 'INVALID_REQUEST',
        field: 'plans[0].budget',
      },
      {
        name: 'both reallocation rules',
        task: 'sync_plans',
        args: () => ({
          idempotency_key: key('bad'),
          plans: [plan('x', { budget: { total: 1, currency: 'USD', reallocation_threshold: 1, reallocation_unlimited: true } })],
        }),
        code: 'INVALID_REQUEST',
        field: 'plans[0].budget',
      },
      {
        name: 'flight ending before it starts',
        task: 'sync_plans',
        args: () => ({ idempotency_key: key('bad'), plans: [plan('x', { flight: { start: '2026-04-01T00:00:00Z', end: '2026-03-01T00:00:00Z' } })] }),
        code: 'INVALID_REQUEST',
        field: 'plans[0].flight.end',
      },
      {
        name: 'member the schema does not define',
        task: 'sync_plans',
        args: () => ({ idempotency_key: key('bad'), plans: [plan('x', { budget_cap: 5 })] }),
        code: 'INVALID_REQUEST',
        field: 'plans[0].budget_cap',
      },
      {
        name: 'fair housing without human review',
        task: 'sync_plans',
        args: () => ({ idempotency_key: key('bad'), plans: [plan('x', { policy_categories: ['fair_housing'] })] }),
        code: 'INVALID_REQUEST',
        field: 'plans[0].human_review_required',
      },
      {
        name: 'unknown channel',
        task: 'sync_plans',
        args: () => ({ idempotency_key: key('bad'), plans: [plan('x', { channels: { allowed: ['tv'] } })] }),
        code: 'INVALID_REQUEST',
        field: 'plans[0].channels.allowed[0]',
      },
      { name: 'check without caller', task: 'check_governance', args: () => ({ plan_id: 'bad-plan' }), code: 'INVALID_REQUEST', field: 'caller' },
      {
        name: 'caller that is no URL',
        task: 'check_governance',
        args: () => ({ plan_id: 'bad-plan', caller: 'seller' }),
        code: 'INVALID_REQUEST',
        field: 'caller',
      },
      { name: 'check of an unknown plan', task: 'check_governance', args: () => proposal('no-such-plan', 10), code: 'PLAN_NOT_FOUND', field: 'plan_id' },
      { name: 'unknown phase', task: 'check_governance', args: () => proposal('bad-plan', 10, { phase: 'later' }), code: 'INVALID_REQUEST', field: 'phase' },
      {
        name: 'delivery phase without delivery_metrics',
        task: 'check_governance',
        args: () => proposal('bad-plan', 10, { phase: 'delivery' }),
        code: 'INVALID_REQUEST',
        field: 'delivery_metrics',
      },
      {
        name: 'delivery report without its period',
        task: 'check_governance',
        args: () => proposal('bad-plan', 10, { phase: 'delivery', delivery_metrics: { spend: 10 } }),
        code: 'INVALID_REQUEST',
        field: 'delivery_metrics.reporting_period',
      },
      {
        name: 'channel share over 100%',
        task: 'check_governance',
        args: () =>
          proposal('bad-plan', 10, {
            phase: 'delivery',
            delivery_metrics: { reporting_period: { start: '2026-03-01T00:00:00Z', end: '2026-03-02T00:00:00Z' }, channel_distribution: { ctv: 150 } },
          }),
        code: 'INVALID_REQUEST',
        field: 'delivery_metrics.channel_distribution.ctv',
      },
      {
        name: 'delivery metric the schema does not define',
        task: 'check_governance',
        args: () =>
          proposal('bad-plan', 10, {
            phase: 'delivery',
            delivery_metrics: { reporting_period: { start: '2026-03-01T00:00:00Z', end: '2026-03-02T00:00:00Z' }, clicks: 3 },
          }),
        code: 'INVALID_REQUEST',
        field: 'delivery_metrics.clicks',
      },
      {
        name: 'outcome of an unknown check',
        task: 'report_plan_outcome',
        args: () => ({ idempotency_key: key('bad'), plan_id: 'bad-plan', check_id: 'chk_nope', outcome: 'completed', governance_context: 'gc' }),
        code: 'REFERENCE_NOT_FOUND',
        field: 'check_id',
      },
      {
        name: 'outcome without governance_context',
        task: 'report_plan_outcome',
        args: () => ({ idempotency_key: key('bad'), plan_id: 'bad-plan', outcome: 'completed' }),
        code: 'INVALID_REQUEST',
        field: 'governance_context',
      },
      {
        name: 'outcome of an unknown plan',
        task: 'report_plan_outcome',
        args: () => ({ idempotency_key: key('bad'), plan_id: 'none', outcome: 'completed', governance_context: 'gc' }),
        code: 'PLAN_NOT_FOUND',
        field: 'plan_id',
      },
      { name: 'audit log without a filter', task: 'get_plan_audit_logs', args: () => ({ include_entries: true }), code: 'INVALID_REQUEST', field: 'plan_ids' },
    ];
    const clients = new Map<string, TaskClient>();
    beforeAll(async () => {
      for (const host of HOSTS) clients.set(host, await clientFor(host, get().server, TOKEN));
      await clients.get('rest')!.call('sync_plans', { idempotency_key: key('bad-setup'), plans: [plan('bad-plan')] });
    });

    test(`${CASES.length} bad inputs: the documented code and field on every host, and nothing written`, async () => {
      const db = get().server.deployment.get(Database);
      const counts = async () => Promise.all(TABLES.map(async (t) => (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(t)}`))[0]!.n));
      const before = await counts();
      for (const host of HOSTS) {
        for (const c of CASES) {
          const { ok, body } = await clients.get(host)!.call(c.task, c.args());
          expect({ host, case: c.name, ok, code: body.code, field: body.field }).toEqual({ host, case: c.name, ok: false, code: c.code, field: c.field });
        }
      }
      expect(await counts()).toEqual(before);
    });
  },
);
