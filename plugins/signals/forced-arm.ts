import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import type { Deferral, TaskHandle } from '../../core/task.ts';

/** How long a forced submitted get_signals waits for force_task_completion before it fails. */
const TTL_MS = 24 * 3600_000;

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
    params: v.object({
      arm: v.picklist(['submitted', 'input-required'], 'must be submitted or input-required'),
      task_id: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'))),
      message: v.optional(v.pipe(v.string(), v.maxLength(2000, 'must be at most 2000 characters'))),
    }),
    async run({ params, principal }) {
      if (params.arm !== 'submitted') throw new ScenarioError('INVALID_PARAMS', 'arm: only submitted is offered (get_signals never asks for input)');
      if (!params.task_id) throw new ScenarioError('INVALID_PARAMS', 'task_id: is required with arm submitted');
      await db.query(sql`
        INSERT INTO signals_forced_arms (principal_id, task_id, message, created_at)
        VALUES (${principal.id}::text, ${params.task_id}::text, ${params.message ?? null}::text, ${clock.now()}::timestamptz)
        ON CONFLICT (principal_id) DO UPDATE SET task_id = EXCLUDED.task_id, message = EXCLUDED.message, created_at = EXCLUDED.created_at`);
      return {
        kind: 'directive',
        forced: { arm: 'submitted', task_id: params.task_id },
        message: `Your next get_signals answers submitted with task ${params.task_id}`,
      };
    },
  });
}

/** The caller's directive, consumed: the deferral to answer with, or undefined. */
export async function takeForcedArm(db: DatabasePort, clock: ClockPort, principalId: string, task: TaskHandle): Promise<Deferral | undefined> {
  const [forced] = await db.query<{ task_id: string; message: string | null }>(
    sql`DELETE FROM signals_forced_arms WHERE principal_id = ${principalId}::text RETURNING task_id, message`,
  );
  if (!forced) return undefined;
  return task.defer({
    status: 'submitted',
    message: forced.message ?? 'The signals agent answers this request later',
    handle: forced.task_id,
    // Both versions require signals in every get_signals answer (none yet), 3.1 its cache layer too.
    partial: { signals: [], cache_scope: 'account' },
    state: { forced: true },
    runAt: new Date(clock.now().getTime() + TTL_MS),
  });
}

/** `resume` of a forced get_signals nobody completed. */
export function expireForcedArm(): never {
  throw new ProtocolError('SERVICE_UNAVAILABLE', 'This sandbox task was forced to submitted and not completed (force_task_completion) within a day', {
    recovery: 'terminal',
  });
}
