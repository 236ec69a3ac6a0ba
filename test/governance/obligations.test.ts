import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { clientFor } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { plan, proposal, startGovernanceServer, TOKEN, type GovernanceServer } from './fixture.ts';

let n = 0;
const key = () => `gov-obligation-${String(++n).padStart(10, '0')}`;

forEachDatabase<GovernanceServer>(
  'governance obligations',
  (adapter, schema) => startGovernanceServer(adapter, schema),
  (g) => g.server.close(),
  (get) => {
    test('a policy naming no channel or country binds every purchase: approved with a condition to honour it, never silently', async () => {
      const c = await clientFor('mcp', get().server, TOKEN);
      const bound = plan('bound', {
        custom_policies: [
          { policy_id: 'weekly_reports', enforcement: 'must', policy: 'CTV buys require weekly delivery reporting.' },
          { policy_id: 'brand_safety', enforcement: 'should', policy: 'Prefer brand-safe inventory.' },
          { policy_id: 'note', enforcement: 'may', policy: 'Informational.' },
        ],
      });
      await c.call('sync_plans', { idempotency_key: key(), plans: [bound] });
      // As an orchestrator asks: tool and payload only, no planned delivery.
      const res = await c.call('check_governance', {
        plan_id: 'bound',
        caller: 'https://buyer.example',
        tool: 'create_media_buy',
        payload: { total_budget: 4000, packages: [{ product_id: 'sports_ctv', budget: 4000 }] },
      });
      expect(bothVersionsErrors('governance/check-governance-response.json', res.body)).toEqual([]);
      expect(res.body.status).toBe('conditions');
      expect(res.body.conditions.map((x: any) => x.reason)).toEqual([
        'The purchase must honour policy weekly_reports: CTV buys require weekly delivery reporting.',
        'The purchase must honour policy brand_safety: Prefer brand-safe inventory.',
      ]);
      expect(res.body.findings.map((f: any) => [f.policy_id, f.severity])).toEqual([
        ['weekly_reports', 'warning'],
        ['brand_safety', 'warning'],
        ['note', 'info'],
      ]);
      const logs = await c.call('get_plan_audit_logs', { plan_ids: ['bound'], include_entries: true });
      expect(logs.body.plans[0].entries.map((e: any) => e.check_type)).toEqual(['intent']);
      await c.close();
    });

    test('a denial answers with its findings only: no conditions beside it', async () => {
      const c = await clientFor('rest', get().server, TOKEN);
      await c.call('sync_plans', { idempotency_key: key(), plans: [plan('strict')] });
      // Over the 60% per seller (a condition) and on linear TV (a denial).
      const res = await c.call(
        'check_governance',
        proposal('strict', 7000, { planned_delivery: { total_budget: 7000, currency: 'USD', channels: ['linear_tv'] } }),
      );
      expect(bothVersionsErrors('governance/check-governance-response.json', res.body)).toEqual([]);
      expect(res.body.status).toBe('denied');
      expect(res.body.conditions).toBeUndefined();
    });

    test("an outcome without check_id is held to its action's latest check; spend no check approved is a finding", async () => {
      const c = await clientFor('a2a', get().server, TOKEN);
      await c.call('sync_plans', { idempotency_key: key(), plans: [plan('held')] });
      const outcome = (context: string, committed: number) => ({
        idempotency_key: key(),
        plan_id: 'held',
        outcome: 'completed',
        governance_context: context,
        seller_response: { seller_reference: `mb_${context}`, committed_budget: committed },
      });
      const judged = async (context: string, committed: number) => {
        const res = await c.call('report_plan_outcome', outcome(context, committed));
        expect(bothVersionsErrors('governance/report-plan-outcome-response.json', res.body)).toEqual([]);
        return [res.body.status, (res.body.findings ?? []).map((f: any) => f.severity)];
      };
      const approved = await c.call('check_governance', proposal('held', 2000, { governance_context: 'gc-approved' }));
      expect(approved.body.status).toBe('approved');
      expect(await judged('gc-approved', 2000)).toEqual(['accepted', []]);
      expect(await judged('gc-approved', 2500)).toEqual(['findings', ['warning']]);
      const denied = await c.call('check_governance', proposal('held', 9000, { governance_context: 'gc-denied' }));
      expect(denied.body.status).toBe('denied');
      expect(await judged('gc-denied', 9000)).toEqual(['findings', ['critical']]);
      expect(await judged('gc-never-checked', 100)).toEqual(['findings', ['warning']]);
      // Both completed outcomes count against the action.
      const logs = await c.call('get_plan_audit_logs', { governance_contexts: ['gc-approved'], include_entries: true });
      expect(logs.body.plans[0].governed_actions).toEqual([expect.objectContaining({ governance_context: 'gc-approved', committed: 4500, check_count: 1 })]);
      await c.close();
    });
  },
);
