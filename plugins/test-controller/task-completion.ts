import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import type { TaskStorePort } from '../../core/ports/tasks.ts';
import type { Json } from '../../core/task.ts';

/** The members a completion payload must carry for the task it completes (the response's required fields). */
const REQUIRED: Record<string, readonly string[]> = {
  create_media_buy: ['media_buy_id', 'packages'],
  update_media_buy: ['media_buy_id'],
  get_products: ['products'],
  get_signals: ['signals'],
  activate_signal: ['deployments'],
  sync_creatives: ['creatives'],
  build_creative: ['creative_manifest'],
};

/** A completion payload is at most this large (the schema lets sellers refuse more than 256 KB). */
const MAX_RESULT_BYTES = 256 * 1024;

/**
 * `force_task_completion` (3.1): completes one of the caller's submitted or working tasks with the
 * given result, through the task store, so the completion is recorded, answered by polling and pushed
 * to the task's webhook like any other. Only the caller's own tasks are found (by task_id or the
 * handle a forced arm named); a finished task is INVALID_STATE. The result is kept as sent (the seller
 * adds nothing over the caller's fields).
 */
export function taskCompletionScenario(store: TaskStorePort): TestScenario {
  return defineScenario({
    name: 'force_task_completion',
    protocol: 'compliance',
    description: "Complete one of your submitted tasks with this result: params {task_id, result} (the result of the task's original method)",
    params: v.object({
      task_id: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(128, 'must be at most 128 characters')),
      result: v.record(v.string(), v.unknown(), 'must be an object (the response of the task being completed)'),
    }),
    async run({ params, principal }) {
      const task = await store.get(params.task_id, principal.id);
      if (!task) throw new ScenarioError('NOT_FOUND', `No task ${params.task_id} of yours`, null);
      const missing = (REQUIRED[task.taskType] ?? []).filter((k) => !(k in params.result));
      if (missing.length) throw new ScenarioError('INVALID_PARAMS', `result: a ${task.taskType} response needs ${missing.join(', ')}`, task.status);
      if (JSON.stringify(params.result).length > MAX_RESULT_BYTES) throw new ScenarioError('INVALID_PARAMS', 'result: larger than 256 KB', task.status);
      try {
        await store.update(task.id, {
          status: 'completed',
          message: 'Completed by the test controller',
          result: { status: 'completed', ...(params.result as Json) },
          runAt: null,
        });
      } catch (error) {
        if (error instanceof ProtocolError && error.code === 'INVALID_STATE') throw new ScenarioError('INVALID_STATE', error.message, task.status);
        throw error;
      }
      return { kind: 'transition', previous_state: task.status, current_state: 'completed' };
    },
  });
}
