import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import { defineScenario, type TestScenario } from '../../core/ports/test-controller.ts';
import type { Deferral, TaskHandle } from '../../core/task.ts';
import { deferForcedRead, forcedArmParams, submittedArm } from '../../lib/adcp/sandbox-directives.ts';

/**
 * `force_get_signals_arm` (3.1): the caller's next get_signals answers the submitted task envelope
 * with the given task_id; force_task_completion then gives its result. The signals agent has no
 * accounts, so the directive is the caller's (the principal the sandbox account belongs to).
 */
export function forcedArmScenario(db: DatabasePort, clock: ClockPort): TestScenario {
  return defineScenario({
    name: 'force_get_signals_arm',
    protocol: 'signals',
    description: 'Your next get_signals answers status submitted with task_id: params {arm: "submitted", task_id, message?}',
    params: forcedArmParams,
    async run({ params, principal }) {
      const taskId = submittedArm(params, 'get_signals');
      await db.query(sql`
        INSERT INTO signals_forced_arms (principal_id, task_id, message, created_at)
        VALUES (${principal.id}::text, ${taskId}::text, ${params.message ?? null}::text, ${clock.now()}::timestamptz)
        ON CONFLICT (principal_id) DO UPDATE SET task_id = EXCLUDED.task_id, message = EXCLUDED.message, created_at = EXCLUDED.created_at`);
      return {
        kind: 'directive',
        forced: { arm: 'submitted', task_id: taskId },
        message: `Your next get_signals answers submitted with task ${taskId}`,
      };
    },
  });
}

/** The caller's directive, consumed: the deferral to answer with, or undefined. */
export async function takeForcedArm(db: DatabasePort, clock: ClockPort, principalId: string, task: TaskHandle): Promise<Deferral | undefined> {
  const [forced] = await db.query<{ task_id: string; message: string | null }>(
    sql`DELETE FROM signals_forced_arms WHERE principal_id = ${principalId}::text RETURNING task_id, message`,
  );
  // Both versions require signals in every get_signals answer (none yet), 3.1 its cache layer too.
  return forced && deferForcedRead(task, forced, clock.now(), { signals: [], cache_scope: 'account' }, 'The signals agent answers this request later');
}
