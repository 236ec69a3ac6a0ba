import * as v from 'valibot';
import { defineTask, keptWithin, type Json } from '../../core/task.ts';
import { planInput, type Plan } from './plan-schema.ts';
import { loadPlans, savePlan } from './store.ts';
import type { GovernanceDeps } from './service.ts';

const versionFields = {
  adcp_major_version: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(3, 'only major version 3 is supported'), v.maxValue(3, 'only major version 3 is supported')),
  ),
  adcp_version: v.optional(v.pipe(v.string(), v.regex(/^\d+\.\d+(-[a-zA-Z0-9.-]+)?$/, 'must look like 3.1'))),
  ext: v.optional(v.record(v.string(), v.unknown())),
};
export { versionFields };

/** The policies a plan applies (sync-plans-response `resolved_policies`). */
function resolvedPolicies(plan: Plan): Json[] {
  return [
    ...(plan.policy_ids ?? []).map((id) => ({ policy_id: id, source: 'explicit', enforcement: 'must', reason: 'Named by the plan (registry policy)' })),
    ...(plan.custom_policies ?? []).map((p) => ({
      policy_id: p.policy_id,
      source: 'explicit',
      enforcement: p.enforcement,
      reason: 'Inline policy of the plan',
    })),
  ];
}

export function syncPlansTask(deps: GovernanceDeps) {
  return defineTask({
    name: 'sync_plans',
    description:
      "Create or replace campaign governance plans (budget, flight, channels, countries, approved sellers, inline policies); a changed plan gets a new version. Sellers then ask check_governance before committing the plan's buys.",
    protocol: 'governance',
    requestSchema: 'governance/sync-plans-request.json',
    mutating: true,
    // Database only, in one transaction of its own that also keeps the answer for replays
    // (keepWithin): one commit per call, not three (key claimed, plans written, answer kept).
    recordsKeyWithin: true,
    input: v.looseObject({
      ...versionFields,
      plans: v.pipe(
        v.array(planInput, 'must be an array of plans'),
        v.minLength(1, 'must not be empty'),
        v.maxLength(100, 'accepts at most 100 plans'),
        v.check((list) => new Set(list.map((p) => p.plan_id)).size === list.length, 'lists the same plan_id twice'),
      ),
    }),
    async handler({ input, principal, clock, idempotency }) {
      const now = clock.now();
      return deps.db.transaction(async (tx) => {
        const existing = await loadPlans(
          tx,
          principal.orgId,
          input.plans.map((p) => p.plan_id),
          true,
        );
        const out: Json[] = [];
        for (const plan of input.plans) {
          const { version } = await savePlan(tx, principal.orgId, plan, existing.get(plan.plan_id), now);
          const item: Json = { plan_id: plan.plan_id, status: 'active', version };
          if (plan.policy_categories) item.categories = plan.policy_categories.map((c) => ({ category_id: c, status: 'active' }));
          const resolved = resolvedPolicies(plan);
          if (resolved.length) item.resolved_policies = resolved;
          out.push(item);
        }
        // A key found taken fails the transaction (rolled back; the call answers what the key holds).
        return keptWithin(idempotency, tx, { plans: out });
      });
    },
  });
}
