import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { defineScenario, type TestScenario } from '../../core/ports/test-controller.ts';
import type { Deferral, TaskHandle } from '../../core/task.ts';
import { deferForcedRead, forcedArmParams, submittedArm } from '../../lib/adcp/sandbox-directives.ts';
import type { SalesDeps } from './deps.ts';

export type ArmOperation = 'create_media_buy' | 'get_products';

export interface ForcedArm {
  arm: 'submitted';
  task_id: string;
  message: string | null;
}

function armScenario(deps: SalesDeps, operation: ArmOperation): TestScenario {
  return defineScenario({
    name: `force_${operation}_arm`,
    protocol: 'media_buy',
    description: `The next ${operation} under this sandbox account answers status submitted with task_id: params {arm: "submitted", task_id, message?}`,
    params: forcedArmParams,
    async run({ params, principal, account }) {
      const taskId = submittedArm(params, operation);
      return deps.db.transaction(async (tx) => {
        const acc = await deps.accounts.sandboxFixture(tx, principal.orgId, account);
        await tx.query(sql`
          INSERT INTO sales_forced_arms (owner, account_id, operation, arm, task_id, message, created_at)
          VALUES (${principal.orgId}::text, ${acc.account_id}::text, ${operation}::text, 'submitted', ${taskId}::text,
                  ${params.message ?? null}::text, ${deps.clock.now()}::timestamptz)
          ON CONFLICT (owner, account_id, operation) DO UPDATE SET arm = EXCLUDED.arm, task_id = EXCLUDED.task_id, message = EXCLUDED.message,
            created_at = EXCLUDED.created_at`);
        return {
          kind: 'directive',
          forced: { arm: 'submitted', task_id: taskId },
          message: `The next ${operation} under account ${acc.account_id} answers submitted with task ${taskId}`,
        };
      });
    },
  });
}

/**
 * Sandbox response arms (comply_test_controller): the caller's next create_media_buy or get_products
 * under this sandbox account answers the submitted task envelope with the given task_id. A forced buy
 * then goes through the seller's review, as a large order does; a forced get_products waits for
 * force_task_completion to give its result. `input-required` is not offered: this seller never waits
 * on the buyer during either call.
 */
export function forcedArmScenarios(deps: SalesDeps): TestScenario[] {
  return [armScenario(deps, 'create_media_buy'), armScenario(deps, 'get_products')];
}

/** Take (and so consume) the directive of this caller, account and operation, if any. */
export async function takeForcedArm(
  q: Queryable,
  owner: string,
  accountId: string,
  operation: ArmOperation = 'create_media_buy',
): Promise<ForcedArm | undefined> {
  const rows = await q.query<ForcedArm>(
    sql`DELETE FROM sales_forced_arms WHERE owner = ${owner}::text AND account_id = ${accountId}::text AND operation = ${operation}::text
        RETURNING arm, task_id, message`,
  );
  return rows[0];
}

/** The submitted answer of a forced get_products: both versions require its products (none yet) and, in 3.1, its cache layer. */
export function deferForcedProducts(task: TaskHandle, forced: ForcedArm, now: Date): Deferral {
  return deferForcedRead(task, forced, now, { products: [], cache_scope: 'account' }, 'The seller answers this request later');
}
