import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Auth } from '../../core/ports/auth.ts';
import { Idempotency } from '../../core/ports/idempotency.ts';
import { TaskNotifier } from '../../core/ports/task-notifier.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { TaskGateway } from '../../core/ports/task-gateway.ts';
import { RequestVerifier } from '../../core/ports/request-verifier.ts';
import { TokenVerifier } from '../../core/ports/token-verifier.ts';
import { TaskStore, type TaskStorePort } from '../../core/ports/tasks.ts';
import { TaskRegistry, Tasks } from '../../core/task.ts';
import { TaskRepository } from './store.ts';
import { TaskRunner } from './runner.ts';
import { capabilitiesTask, getTaskStatusTask } from './protocol-tasks.ts';
import { createTaskGateway } from './gateway.ts';
import { cancelTask } from './cancel.ts';
import { RateLimiter } from '../../core/ports/rate-limit.ts';

const options = v.object({
  /** Run the resume worker in this instance (every instance may; claims never overlap). */
  worker: v.optional(v.boolean(), true),
  /** How often the worker looks for due steps. */
  pollIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(60_000)), 250),
  /** A claimed step not finished within this time may be taken over by another instance. */
  leaseSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3600)), 60),
  maxAttempts: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 5),
  /**
   * `push_notification_config.operation_id`: `required` refuses registrations without it (the spec
   * allows that); `optional` accepts them (AdCP 3.0 has no such field). Default: required in `proto`,
   * optional in `adcp`.
   */
  pushOperationId: v.optional(v.picklist(['required', 'optional'], 'must be required or optional')),
});

/**
 * The task runtime: the registry features add tasks to, the gateway hosts call (authentication,
 * validation, idempotency, durable task records), polling (`get_task_status`), the worker that
 * runs deferred steps, and `get_{ns}_capabilities`. Mutating tasks are always idempotent:
 * the Idempotency port is required.
 */
export default definePlugin({
  name: 'tasks',
  provides: [Tasks, TaskStore, TaskGateway],
  deps: {
    db: Database,
    clock: Clock,
    ids: Ids,
    box: SecretBox,
    auth: Auth,
    idempotency: Idempotency,
    notifier: optional(TaskNotifier),
    verifier: optional(RequestVerifier),
    tokens: optional(TokenVerifier),
    limiter: optional(RateLimiter),
  },
  options,
  env: { PUSH_OPERATION_ID: 'pushOperationId' },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, ids, box, auth, idempotency, notifier, verifier, tokens, limiter }, kernel) {
    const ns = kernel.config.protocol.namespace;
    const registry = new TaskRegistry(ns);
    const repo = new TaskRepository(db, clock, ids, notifier, box);
    const runner = new TaskRunner(repo, registry, clock, kernel.logger, kernel.options);
    const store: TaskStorePort = {
      create: (task) => repo.create(task),
      get: (id, principalId) => repo.get(id, principalId),
      update: (id, update) => repo.update(id, update),
      history: async (id, principalId) => ((await repo.get(id, principalId)) ? repo.history(id) : []),
      cancel: (id, principalId) => cancelTask(repo, id, principalId),
      runDue: (limit) => runner.runDue(limit),
    };
    registry.add(getTaskStatusTask(repo), capabilitiesTask(registry, idempotency, verifier));
    kernel.provide(Tasks, registry);
    kernel.provide(TaskStore, store);
    const pipelineOptions = {
      requireOperationId: (kernel.options.pushOperationId ?? (ns === 'adcp' ? 'optional' : 'required')) === 'required',
      // Metadata names only an authorization server whose tokens the Auth port accepts (RFC 9728 section 2):
      // without an OAuth plugin, credentials are API keys and there is no issuer to name.
      authorizationServers: tokens ? [tokens.issuer] : [],
      issuerFor: tokens ? (base: string | null) => tokens.issuerFor(base) : undefined,
    };
    kernel.provide(
      TaskGateway,
      createTaskGateway({ registry, db, auth, idempotency, repo, notifier, verifier, limiter, clock, ids, logger: kernel.logger, options: pipelineOptions }),
    );
    if (kernel.options.worker) {
      // A full batch means more steps may be due: run again at once.
      kernel.scheduler.add({
        name: 'resume',
        intervalMs: kernel.options.pollIntervalMs,
        run: async () => ((await runner.runDue()) >= 20 ? 'again' : undefined),
      });
    }
  },
});
