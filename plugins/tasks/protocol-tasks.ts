import * as v from 'valibot';
import { defineTask, type Json, type TaskRegistry } from '../../core/task.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { IdempotencyPort } from '../../core/ports/idempotency.ts';
import type { StatusHistoryEntry, TaskRecord } from '../../core/ports/tasks.ts';
import type { TaskRepository } from './store.ts';

/** Protocol names of capabilities (`media_buy`) as the task-status enum spells them (`media-buy`). */
const statusProtocol = (group: string) => group.replace(/_/g, '-');

/** The get_task_status body for a record (protocol/get-task-status-response.json). */
export function taskStatusBody(task: TaskRecord, options: { history?: StatusHistoryEntry[]; includeResult?: boolean } = {}): Json {
  const body: Json = {
    task_id: task.id,
    task_type: task.taskType,
    protocol: statusProtocol(task.protocol),
    status: task.status,
    created_at: task.createdAt.toISOString(),
    updated_at: task.updatedAt.toISOString(),
    has_webhook: !!(task.pushNotificationConfig || task.a2aPushConfig),
  };
  if (task.completedAt) body.completed_at = task.completedAt.toISOString();
  if (task.message) body.message = task.message;
  if (task.progress) body.progress = task.progress;
  const result = task.result as Json | null;
  if (task.status === 'failed' && result) {
    const err = (result.errors as Json[] | undefined)?.[0];
    if (err) body.error = { code: err.code, message: err.message };
  }
  // Pollers want the body once there is one: always on terminal states, on request otherwise.
  if (result && (options.includeResult || task.status === 'completed' || task.status === 'failed')) body.result = result;
  if (options.history) {
    body.history = options.history.map((h) => ({
      timestamp: h.at.toISOString(),
      type: 'response',
      data: { status: h.status, ...(h.message ? { message: h.message } : {}), ...(h.result ? { result: h.result } : {}) },
    }));
  }
  if (task.context) body.context = task.context;
  return body;
}

export function getTaskStatusTask(repo: TaskRepository) {
  return defineTask({
    name: 'get_task_status',
    description: 'Poll an asynchronous task: status, progress, and the result once it is final.',
    protocol: 'protocol',
    input: v.object({
      task_id: v.pipe(v.string(), v.minLength(1, 'is required'), v.maxLength(128, 'must be at most 128 characters')),
      include_history: v.optional(v.boolean()),
      include_result: v.optional(v.boolean()),
    }),
    async handler({ input, principal }) {
      const task = await repo.get(input.task_id, principal.id);
      if (!task) throw new ProtocolError('REFERENCE_NOT_FOUND', `Task ${input.task_id} not found`, { status: 404, field: 'task_id' });
      const history = input.include_history ? await repo.history(task.id) : undefined;
      const body = taskStatusBody(task, { history, includeResult: input.include_result });
      // The body's own `status` is the task's; the invocation pipeline must not overwrite it.
      return body;
    },
  });
}

const PROTOCOLS = ['media_buy', 'signals', 'governance', 'sponsored_intelligence', 'creative', 'brand', 'measurement'] as const;

export function capabilitiesTask(registry: TaskRegistry, idempotency: () => IdempotencyPort | undefined) {
  return defineTask({
    name: (ns) => `get_${ns}_capabilities`,
    description: 'What this agent supports: protocol versions, idempotency, protocols and their capabilities.',
    protocol: 'protocol',
    auth: 'optional',
    input: v.object({
      protocols: v.optional(v.pipe(v.array(v.picklist(PROTOCOLS, `must be one of ${PROTOCOLS.join(', ')}`)), v.minLength(1), v.maxLength(PROTOCOLS.length))),
    }),
    handler({ input, namespace }) {
      const port = idempotency();
      const contributions = registry
        .capabilityContributions()
        .filter((c) => !input.protocols || (input.protocols as readonly string[]).includes(c.protocol));
      const body: Json = {
        [namespace]: {
          major_versions: [3],
          idempotency: port ? { supported: true, replay_ttl_seconds: port.replayTtlSeconds } : { supported: false },
        },
      };
      const supported = [...new Set(contributions.map((c) => c.protocol))];
      if (supported.length) body.supported_protocols = supported;
      for (const c of contributions) Object.assign(body, c.block ?? {});
      return body;
    },
  });
}
