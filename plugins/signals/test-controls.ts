import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { TaskStorePort } from '../../core/ports/tasks.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import type { ActivationReads } from './activation-reads.ts';

/**
 * `force_signal_activation_status`: the caller's pending activations of a signal go live now
 * (get_signals shows them live at once); with the activation's `task_id` the task also completes
 * at the worker's next run, sending its webhook, instead of at the platform's estimate.
 */
export function signalsScenarios(db: DatabasePort, clock: ClockPort, store: TaskStorePort | undefined, reads: ActivationReads): TestScenario[] {
  return [
    defineScenario({
      name: 'force_signal_activation_status',
      protocol: 'signals',
      description: "Make the caller's pending activations of a signal live now: params {signal_agent_segment_id, status: live, task_id?}",
      params: v.object({
        signal_agent_segment_id: v.pipe(v.string(), v.minLength(1), v.maxLength(255)),
        status: v.optional(v.literal('live', 'must be live'), 'live'),
        task_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
      }),
      async run({ params, principal }) {
        const now = clock.now();
        const task = params.task_id && store ? await store.get(params.task_id, principal.id) : null;
        if (params.task_id && task?.taskType !== 'activate_signal')
          throw new ScenarioError('NOT_FOUND', `No activate_signal task ${params.task_id} of yours`, null);
        const moved = await db.transaction(async (tx) => {
          const rows = await tx.query<{ status: string }>(sql`SELECT status FROM signal_activations
            WHERE principal_id = ${principal.id}::text AND signal_id = ${params.signal_agent_segment_id}::text FOR UPDATE`);
          if (!rows.length) throw new ScenarioError('NOT_FOUND', `You have no activation of ${params.signal_agent_segment_id}`, null);
          if (!rows.some((r) => r.status === 'pending'))
            throw new ScenarioError('INVALID_STATE', `Every activation of ${params.signal_agent_segment_id} is live already`, 'live');
          const updated =
            await tx.query(sql`UPDATE signal_activations SET status = 'live', ready_at = ${now}::timestamptz, deployed_at = COALESCE(deployed_at, ${now}::timestamptz)
            WHERE principal_id = ${principal.id}::text AND signal_id = ${params.signal_agent_segment_id}::text AND status = 'pending' RETURNING id`);
          await reads.changed(tx, principal.id);
          return updated.length;
        });
        if (task && store && (task.status === 'submitted' || task.status === 'working')) await store.update(task.id, { runAt: now });
        return {
          kind: 'transition',
          previous_state: 'pending',
          current_state: 'live',
          message: `${moved} activation(s) of ${params.signal_agent_segment_id} are live`,
        };
      },
    }),
  ];
}
