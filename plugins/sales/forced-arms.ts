import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import type { Deferral, TaskHandle } from '../../core/task.ts';
import type { SalesDeps } from './deps.ts';

export type ArmOperation = 'create_media_buy' | 'get_products';

export interface ForcedArm {
  arm: 'submitted';
  task_id: string;
  message: string | null;
}

/** How long a forced submitted read waits for force_task_completion before it fails. */
const FORCED_READ_TTL_MS = 24 * 3600_000;

const armParams = v.object({
  arm: v.picklist(['submitted', 'input-required'], 'must be submitted or input-required'),
  task_id: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'))),
  message: v.optional(v.pipe(v.string(), v.maxLength(2000, 'must be at most 2000 characters'))),
});

function armScenario(deps: SalesDeps, operation: ArmOperation, refusal: string): TestScenario {
  return defineScenario({
    name: `force_${operation}_arm`,
    protocol: 'media_buy',
    description: `The next ${operation} under this sandbox account answers status submitted with task_id: params {arm: "submitted", task_id, message?}`,
    params: armParams,
    async run({ params, principal, account }) {
      if (params.arm !== 'submitted') throw new ScenarioError('INVALID_PARAMS', `arm: only submitted is offered (${refusal})`);
      if (!params.task_id) throw new ScenarioError('INVALID_PARAMS', 'task_id: is required with arm submitted');
      return deps.db.transaction(async (tx) => {
        const acc = await deps.accounts.sandboxFixture(tx, principal.orgId, account);
        await tx.query(sql`
          INSERT INTO sales_forced_arms (owner, account_id, operation, arm, task_id, message, created_at)
          VALUES (${principal.orgId}::text, ${acc.account_id}::text, ${operation}::text, 'submitted', ${params.task_id}::text,
                  ${params.message ?? null}::text, ${deps.clock.now()}::timestamptz)
          ON CONFLICT (owner, account_id, operation) DO UPDATE SET arm = EXCLUDED.arm, task_id = EXCLUDED.task_id, message = EXCLUDED.message,
            created_at = EXCLUDED.created_at`);
        return {
          kind: 'directive',
          forced: { arm: 'submitted', task_id: params.task_id! },
          message: `The next ${operation} under account ${acc.account_id} answers submitted with task ${params.task_id}`,
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
  return [
    armScenario(deps, 'create_media_buy', 'create_media_buy never asks the buyer for input'),
    armScenario(deps, 'get_products', 'get_products never asks the buyer for input'),
  ];
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

/** The submitted answer of a forced read: its result comes from force_task_completion, or it fails after a day. */
export function deferForcedRead(task: TaskHandle, forced: ForcedArm, now: Date): Deferral {
  return task.defer({
    status: 'submitted',
    message: forced.message ?? 'The seller answers this request later',
    handle: forced.task_id,
    // Both versions require the answer's products (none yet) and, in 3.1, its cache layer.
    partial: { products: [], cache_scope: 'account' },
    state: { forced: true },
    runAt: new Date(now.getTime() + FORCED_READ_TTL_MS),
  });
}

/** `resume` of a forced read nobody completed. */
export function expireForcedRead(): never {
  throw new ProtocolError('SERVICE_UNAVAILABLE', 'This sandbox task was forced to submitted and not completed (force_task_completion) within a day', {
    recovery: 'terminal',
  });
}
