import { ProtocolError } from '../../core/errors.ts';
import { errorBody } from './pipeline.ts';
import { isReschedule, type Json, type ResumeContext, type TaskRegistry } from '../../core/task.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { Logger } from '../../core/log.ts';
import type { TaskRepository, InternalTask } from './store.ts';

export interface RunnerOptions {
  leaseSeconds: number;
  maxAttempts: number;
}

/**
 * Runs the `resume` steps of deferred tasks. A submitted task turns `working` when picked up;
 * the step's body completes it, a ProtocolError fails it, an unexpected error is retried with
 * backoff until `maxAttempts`, then fails it.
 */
export class TaskRunner {
  constructor(
    private readonly repo: TaskRepository,
    private readonly registry: TaskRegistry,
    private readonly clock: ClockPort,
    private readonly logger: Logger,
    private readonly options: RunnerOptions,
  ) {}

  /** Run the due steps; one task's failure (even an unexpected one) never stops the others. */
  async runDue(limit = 20): Promise<number> {
    const claimed = await this.repo.claimDue(limit, this.options.leaseSeconds);
    for (const task of claimed) {
      try {
        await this.runOne(task);
      } catch (error) {
        // Recording the outcome itself failed (e.g. its webhook cannot be queued): the lease expires and the
        // step is retried; after the last attempt the task fails without notifying, so it cannot come back.
        this.logger.error({ err: error, taskId: task.id, taskType: task.taskType, attempt: task.attempts }, 'task step could not be recorded');
        if (task.attempts >= this.options.maxAttempts) {
          const failure = new ProtocolError('SERVICE_UNAVAILABLE', 'The task could not be completed', { recovery: 'terminal' });
          const definition = this.registry.list().find((t) => t.taskType === task.taskType);
          const result = errorBody(failure, this.registry.namespace, task.context ?? undefined, definition);
          await this.repo
            .update(task.id, { status: 'failed', message: failure.message, result }, undefined, { notify: false })
            .catch((e) => this.logger.error({ err: e, taskId: task.id }, 'task could not be failed'));
        }
      }
    }
    return claimed.length;
  }

  private async runOne(task: InternalTask): Promise<void> {
    const ns = this.registry.namespace;
    const definition = [...this.registry.list()].find((t) => t.taskType === task.taskType);
    const log = this.logger.child({ taskId: task.id, taskType: task.taskType });
    const context = task.context ?? undefined;
    if (!definition?.resume) {
      const error = new ProtocolError('SERVICE_UNAVAILABLE', `No resume step for task type ${task.taskType} in this deployment`);
      await this.repo.update(task.id, { status: 'failed', message: error.message, result: errorBody(error, ns, context, definition) });
      return;
    }
    const ctx: ResumeContext = {
      taskId: task.id,
      state: task.state,
      principalId: task.principalId,
      context,
      logger: log,
      clock: this.clock,
      namespace: ns,
      progress: async (progress, message) => {
        await this.repo.update(task.id, { status: 'working', progress, ...(message ? { message } : {}) });
      },
      reschedule: (options) => ({ kind: 'reschedule', ...options }),
    };
    try {
      if (task.status === 'submitted') await this.repo.update(task.id, { status: 'working', message: 'Processing' });
      const outcome = await definition.resume(ctx);
      if (isReschedule(outcome)) {
        await this.repo.update(task.id, {
          ...(outcome.status ? { status: outcome.status } : {}),
          ...(outcome.message !== undefined ? { message: outcome.message } : {}),
          ...(outcome.progress ? { progress: outcome.progress } : {}),
          state: outcome.state,
          runAt: outcome.runAt,
          releaseLease: true,
        });
        return;
      }
      const body: Json = { status: 'completed', ...outcome };
      if (context) body.context = context;
      await this.repo.update(task.id, { status: 'completed', message: 'Completed', result: body, progress: null });
    } catch (error) {
      if (error instanceof ProtocolError) {
        await this.repo.update(task.id, { status: 'failed', message: error.message, result: errorBody(error, ns, context, definition) });
        return;
      }
      log.error({ err: error, attempt: task.attempts }, 'task step failed');
      if (task.attempts >= this.options.maxAttempts) {
        const failure = new ProtocolError('SERVICE_UNAVAILABLE', 'The task failed after several attempts', { recovery: 'transient' });
        await this.repo.update(task.id, { status: 'failed', message: failure.message, result: errorBody(failure, ns, context, definition) });
        return;
      }
      // Retry later with exponential backoff; the lease is released so any instance may pick it up.
      const delay = Math.min(300, 2 ** task.attempts) * 1000;
      await this.repo.update(task.id, { runAt: new Date(this.clock.now().getTime() + delay), releaseLease: true });
    }
  }
}
