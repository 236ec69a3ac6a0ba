import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Idempotency } from '../../core/ports/idempotency.ts';
import { TaskNotifier } from '../../core/ports/task-notifier.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { TaskStore, type TaskStorePort } from '../../core/ports/tasks.ts';
import { TaskRegistry, Tasks } from '../../core/task.ts';
import { TaskRepository, type NotifierRef } from './store.ts';
import { TaskRunner } from './runner.ts';
import { capabilitiesTask, getTaskStatusTask } from './protocol-tasks.ts';

interface State {
  notifier: NotifierRef;
  runner: TaskRunner;
  stop?: () => Promise<void>;
}
// Per-deployment state (a process may run several deployments, e.g. tests).
const states = new WeakMap<object, State>();

const options = v.object({
  /** Run the resume worker in this instance (every instance may; claims never overlap). */
  worker: v.optional(v.boolean(), true),
  /** How often the worker looks for due steps. */
  pollIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(60_000)), 250),
  /** A claimed step not finished within this time may be taken over by another instance. */
  leaseSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3600)), 60),
  maxAttempts: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 5),
});

/**
 * Task registry + durable task records: asynchronous calls get a task id, a status history and
 * polling (`get_task_status`); a worker runs the deferred steps. Also defines the protocol tasks
 * `get_{ns}_capabilities` and `get_task_status`.
 */
export default definePlugin({
  name: 'tasks',
  provides: [Tasks, TaskStore],
  requires: [Database],
  optional: [Idempotency],
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  register(ctx) {
    const registry = new TaskRegistry(ctx.config.protocol.namespace);
    // The notifier (webhooks plugin) is looked up at start: it may itself depend on this plugin.
    const notifier: NotifierRef = { current: undefined };
    const repo = new TaskRepository(ctx.get(Database), ctx.get(Clock), ctx.get(Ids), notifier, ctx.get(SecretBox));
    const runner = new TaskRunner(repo, registry, ctx.get(Clock), ctx.logger, ctx.options);
    const store: TaskStorePort = {
      create: (task) => repo.create(task),
      get: (id, principalId) => repo.get(id, principalId),
      update: (id, update) => repo.update(id, update),
      history: async (id, principalId) => ((await repo.get(id, principalId)) ? repo.history(id) : []),
      async cancel(id, principalId) {
        const task = await repo.get(id, principalId);
        if (!task) return null;
        return repo.update(id, { status: 'canceled', message: 'Canceled by the caller' }, (t) => t.status !== 'completed' && t.status !== 'failed' && t.status !== 'canceled' && t.status !== 'rejected');
      },
      runDue: (limit) => runner.runDue(limit),
    };
    registry.add(getTaskStatusTask(repo), capabilitiesTask(registry, () => ctx.tryGet(Idempotency)));
    ctx.provide(Tasks, registry);
    ctx.provide(TaskStore, store);
    states.set(ctx, { notifier, runner });
  },
  start(ctx) {
    const state = states.get(ctx)!;
    const { notifier, runner } = state;
    notifier.current = ctx.tryGet(TaskNotifier);
    if (!ctx.options.worker) return;
    let running: Promise<unknown> | null = null;
    const timer = setInterval(() => {
      if (running) return;
      running = runner
        .runDue()
        .catch((error) => ctx.logger.error({ err: error }, 'task worker pass failed'))
        .finally(() => (running = null));
    }, ctx.options.pollIntervalMs);
    state.stop = async () => {
      clearInterval(timer);
      await running;
    };
  },
  async stop(ctx) {
    await states.get(ctx)?.stop?.();
  },
});
