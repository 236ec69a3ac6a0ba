import * as v from 'valibot';
import { defineTask, type Json } from '../../core/task.ts';
import type { GovernanceDeps } from './service.ts';
import { versionFields } from './sync-plans.ts';
import { planRecords, plansOfContexts, type CheckRow, type OutcomeRow } from './store.ts';
import { BatchedRead } from '../../lib/batched-read.ts';

const ids = v.pipe(
  v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
  v.minLength(1, 'must not be empty'),
  v.maxLength(100, 'accepts at most 100 ids'),
);
const round = (n: number) => Math.round(n * 100) / 100;
const PURCHASE_TYPES = ['media_buy', 'rights_license', 'signal_activation', 'creative_services'] as const;

/** A 3.1 caller (adcp_version 3.1+) reads entry decisions as `verdict`; 3.0 as `status`; both forbid the other's. */
const pins31 = (version?: string) => {
  const m = version ? /^(\d+)\.(\d+)/.exec(version) : null;
  return !!m && (Number(m[1]) > 3 || Number(m[2]) >= 1);
};

function checkEntry(c: CheckRow, v31: boolean): Json {
  const out: Json = {
    id: c.check_id,
    type: 'check',
    timestamp: c.created_at.toISOString(),
    plan_id: c.plan_id,
    caller: c.caller,
    check_type: c.check_type,
    mode: c.mode,
    explanation: c.explanation,
    policies_evaluated: c.policies_evaluated,
    categories_evaluated: c.categories_evaluated,
    governance_context: c.governance_context,
    purchase_type: c.purchase_type,
  };
  if (c.tool) out.tool = c.tool;
  if (v31) out.verdict = c.status;
  if (c.findings.length)
    out.findings = c.findings.map(({ category_id, policy_id, severity, explanation }) => ({
      category_id,
      ...(policy_id ? { policy_id } : {}),
      severity,
      explanation,
    }));
  return out;
}

function outcomeEntry(o: OutcomeRow): Json {
  const out: Json = {
    id: o.outcome_id,
    type: 'outcome',
    timestamp: o.created_at.toISOString(),
    plan_id: o.plan_id,
    outcome: o.outcome,
    governance_context: o.governance_context,
    purchase_type: o.purchase_type,
  };
  if (o.committed_budget !== null) out.committed_budget = o.committed_budget;
  return out;
}

export function getPlanAuditLogsTask(deps: GovernanceDeps) {
  // The records every reader waiting at once wants, in one statement per round.
  const records = new BatchedRead((_, wanted: Array<{ owner: string; plan_ids: string[] }>) => planRecords(deps.db, wanted));
  return defineTask({
    name: 'get_plan_audit_logs',
    description:
      "The governance record of the caller's plans: budget authorized, committed and remaining, decision counts, governed actions, and (include_entries) every check and outcome in order.",
    protocol: 'governance',
    requestSchema: 'governance/get-plan-audit-logs-request.json',
    input: v.pipe(
      v.looseObject({
        ...versionFields,
        plan_ids: v.optional(ids),
        portfolio_plan_ids: v.optional(ids),
        governance_contexts: v.optional(
          v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(4096))), v.minLength(1, 'must not be empty'), v.maxLength(100)),
        ),
        purchase_types: v.optional(v.pipe(v.array(v.picklist(PURCHASE_TYPES)), v.minLength(1))),
        include_entries: v.optional(v.boolean()),
      }),
      v.forward(
        v.check((i) => !!(i.plan_ids || i.portfolio_plan_ids || i.governance_contexts), 'give plan_ids, portfolio_plan_ids or governance_contexts'),
        ['plan_ids'],
      ),
    ),
    async handler({ input, principal }) {
      const owner = principal.orgId;
      const wanted = new Set([...(input.plan_ids ?? []), ...(input.portfolio_plan_ids ?? [])]);
      if (input.governance_contexts) for (const id of await plansOfContexts(deps.db, owner, input.governance_contexts)) wanted.add(id);
      const planIds = [...wanted];
      const { plans, committed, checks, outcomes } = await records.read('', { owner, plan_ids: planIds });
      const types = input.purchase_types as readonly string[] | undefined;
      const contexts = input.governance_contexts ? new Set(input.governance_contexts) : null;
      const keep = (r: { purchase_type: string; governance_context: string }) =>
        (!types || types.includes(r.purchase_type)) && (!contexts || contexts.has(r.governance_context));
      const v31 = pins31(input.adcp_version);
      const out: Json[] = [];
      // Unknown plans are left out (another organization's plans are never shown).
      for (const id of planIds) {
        const plan = plans.get(id);
        if (!plan) continue;
        const mine = checks.filter((c) => c.plan_id === id && keep(c));
        const done = outcomes.filter((o) => o.plan_id === id && keep(o));
        const authorized = plan.plan.budget.total;
        const spent = committed.get(id)!;
        const actions = new Map<string, Json>();
        for (const c of mine) {
          const a = actions.get(c.governance_context) ?? {
            governance_context: c.governance_context,
            purchase_type: c.purchase_type,
            status: 'active',
            committed: 0,
            check_count: 0,
          };
          a.check_count = (a.check_count as number) + 1;
          // An action whose latest check was denied is held until a new check approves it.
          a.status = c.status === 'denied' ? 'suspended' : 'active';
          actions.set(c.governance_context, a);
        }
        for (const o of done) {
          const a = actions.get(o.governance_context) ?? {
            governance_context: o.governance_context,
            purchase_type: o.purchase_type,
            status: 'active',
            committed: 0,
            check_count: 0,
          };
          if (o.outcome === 'completed') {
            a.committed = round((a.committed as number) + (o.committed_budget ?? 0));
            a.status = 'active';
          }
          if (o.outcome === 'failed') a.status = 'completed';
          if (o.seller_reference) a.seller_reference = o.seller_reference;
          actions.set(o.governance_context, a);
        }
        const count = (s: string) => mine.filter((c) => c.status === s).length;
        const entry: Json = {
          plan_id: id,
          plan_version: plan.version,
          status: plan.status,
          budget: {
            authorized,
            committed: spent,
            remaining: round(authorized - spent),
            utilization_pct: authorized > 0 ? round((spent / authorized) * 100) : 0,
          },
          summary: {
            checks_performed: mine.length,
            outcomes_reported: done.length,
            statuses: { approved: count('approved'), denied: count('denied'), conditions: count('conditions'), human_reviewed: 0 },
            findings_count: mine.reduce((s, c) => s + c.findings.length, 0),
          },
          governed_actions: [...actions.values()],
        };
        if (input.include_entries) {
          // Ids are `chk_` / `out_` + a UUID v7: in creation order at equal timestamps.
          const order = (e: Json) => `${e.timestamp as string}|${(e.id as string).slice(4)}`;
          entry.entries = [...mine.map((c) => checkEntry(c, v31)), ...done.map(outcomeEntry)].sort((a, b) => (order(a) < order(b) ? -1 : 1));
        }
        out.push(entry);
      }
      return { plans: out };
    },
  });
}
