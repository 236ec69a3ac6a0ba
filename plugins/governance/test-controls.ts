import * as v from 'valibot';
import { parseOrThrow } from '../../core/validation.ts';
import { defineScenario, type TestScenario } from '../../core/ports/test-controller.ts';
import { planInput } from './plan-schema.ts';
import { loadPlans, savePlan } from './store.ts';
import type { GovernanceDeps } from './service.ts';

/** `seed_plan`: create or replace one of the caller's plans from a fixture (the sync_plans item shape). */
export function governanceScenarios(deps: GovernanceDeps): TestScenario[] {
  return [
    defineScenario({
      name: 'seed_plan',
      protocol: 'governance',
      description: 'Create or replace a plan of the caller: params {plan_id, fixture: a sync_plans plan without plan_id}',
      params: v.object({ plan_id: v.pipe(v.string(), v.minLength(1), v.maxLength(128)), fixture: v.optional(v.record(v.string(), v.unknown()), {}) }),
      async run({ params, principal }) {
        const plan = parseOrThrow(planInput, { ...params.fixture, plan_id: params.plan_id }, 'params.fixture');
        const version = await deps.db.transaction(async (tx) => {
          const existing = (await loadPlans(tx, principal.orgId, [plan.plan_id], true)).get(plan.plan_id);
          return (await savePlan(tx, principal.orgId, plan, existing, deps.clock.now())).version;
        });
        return { kind: 'seed', message: `Plan ${plan.plan_id} is at version ${version}` };
      },
    }),
  ];
}
