import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import type { SalesDeps } from './deps.ts';

export interface ForcedArm {
  arm: 'submitted';
  task_id: string;
  message: string | null;
}

/**
 * `force_create_media_buy_arm`: the caller's next create_media_buy under this sandbox account answers
 * the submitted task envelope with the given task_id (the buy then goes through the seller's review,
 * as a large order does, and the task completes with it). `input-required` is not offered: this
 * seller never waits on the buyer during a create.
 */
export function forcedArmScenarios(deps: SalesDeps): TestScenario[] {
  return [
    defineScenario({
      name: 'force_create_media_buy_arm',
      protocol: 'media_buy',
      description: 'The next create_media_buy under this sandbox account answers status submitted with task_id: params {arm: "submitted", task_id, message?}',
      params: v.object({
        arm: v.picklist(['submitted', 'input-required'], 'must be submitted or input-required'),
        task_id: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'))),
        message: v.optional(v.pipe(v.string(), v.maxLength(2000, 'must be at most 2000 characters'))),
      }),
      async run({ params, principal, account }) {
        if (params.arm !== 'submitted')
          throw new ScenarioError('INVALID_PARAMS', 'arm: only submitted is offered (create_media_buy never asks the buyer for input)');
        if (!params.task_id) throw new ScenarioError('INVALID_PARAMS', 'task_id: is required with arm submitted');
        return deps.db.transaction(async (tx) => {
          const acc = await deps.accounts.sandboxFixture(tx, principal.orgId, account);
          await tx.query(sql`
            INSERT INTO sales_forced_arms (owner, account_id, arm, task_id, message, created_at)
            VALUES (${principal.orgId}::text, ${acc.account_id}::text, 'submitted', ${params.task_id}::text, ${params.message ?? null}::text, ${deps.clock.now()}::timestamptz)
            ON CONFLICT (owner, account_id) DO UPDATE SET arm = EXCLUDED.arm, task_id = EXCLUDED.task_id, message = EXCLUDED.message, created_at = EXCLUDED.created_at`);
          return {
            kind: 'directive',
            forced: { arm: 'submitted', task_id: params.task_id! },
            message: `The next create_media_buy under account ${acc.account_id} answers submitted with task ${params.task_id}`,
          };
        });
      },
    }),
  ];
}

/** Take (and so consume) the directive of this caller and account, if any. */
export async function takeForcedArm(q: Queryable, owner: string, accountId: string): Promise<ForcedArm | undefined> {
  const rows = await q.query<ForcedArm>(
    sql`DELETE FROM sales_forced_arms WHERE owner = ${owner}::text AND account_id = ${accountId}::text RETURNING arm, task_id, message`,
  );
  return rows[0];
}
