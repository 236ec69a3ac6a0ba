import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Governance } from '../../core/ports/governance.ts';
import { TestController } from '../../core/ports/test-controller.ts';
import { Tasks } from '../../core/task.ts';
import { createGovernanceService, type GovernanceDeps } from './service.ts';
import { syncPlansTask } from './sync-plans.ts';
import { checkGovernanceTask, reportPlanOutcomeTask } from './check-governance.ts';
import { getPlanAuditLogsTask } from './audit-logs.ts';
import { governanceScenarios } from './test-controls.ts';

const options = v.object({
  /** `enforce` blocks on denials; `advisory` and `audit` approve everything and keep the findings. */
  mode: v.optional(v.picklist(['enforce', 'advisory', 'audit'], 'must be enforce, advisory or audit'), 'enforce'),
  /** How long an approval (or approval with conditions) holds. */
  checkTtlSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60), v.maxValue(30 * 86_400)), 3600),
});

/**
 * Campaign governance agent: plans with budgets, flights, channels, markets, approved sellers and
 * inline policies (`sync_plans`); `check_governance` judges a proposed buy against its plan
 * (approved, approved with conditions, denied with findings) and keeps every decision;
 * `report_plan_outcome` commits budget; `get_plan_audit_logs` returns the record. A sales agent
 * in the same deployment consults it through the Governance port.
 */
export default definePlugin({
  name: 'governance',
  provides: [Governance],
  deps: { db: Database, clock: Clock, ids: Ids, tasks: Tasks, controller: optional(TestController) },
  options,
  env: { GOVERNANCE_MODE: 'mode' },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, ids, tasks, controller }, kernel) {
    const deps: GovernanceDeps = { db, clock, ids, mode: kernel.options.mode, checkTtlSeconds: kernel.options.checkTtlSeconds };
    const service = createGovernanceService(deps);
    tasks.add(syncPlansTask(deps), checkGovernanceTask(service), reportPlanOutcomeTask(service), getPlanAuditLogsTask(deps));
    tasks.declareCapability({ protocol: 'governance', block: { governance: {} }, specialisms: ['governance-spend-authority', 'governance-delivery-monitor'] });
    kernel.provide(Governance, {
      check: ({ owner, ...request }) => service.check(owner, request),
      async reportOutcome({ owner, ...outcome }) {
        await service.reportOutcome(owner, outcome);
      },
    });
    controller?.register(...governanceScenarios(deps));
  },
});
