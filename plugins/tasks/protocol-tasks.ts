import * as v from 'valibot';
import { defineTask, type CapabilityContribution, type Json, type TaskRegistry } from '../../core/task.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { IdempotencyPort } from '../../core/ports/idempotency.ts';
import type { RequestVerifierPort } from '../../core/ports/request-verifier.ts';
import { SUPPORTED_MAJOR_VERSIONS } from './pipeline.ts';
import type { StatusHistoryEntry, TaskRecord } from '../../core/ports/tasks.ts';
import type { TaskRepository } from './store.ts';

/** Protocol names of capabilities (`media_buy`) as the task-status enum spells them (`media-buy`). */
const statusProtocol = (group: string) => group.replace(/_/g, '-');

/** The get_task_status body for a record (protocol/get-task-status-response.json). */
export function taskStatusBody(task: TaskRecord, options: { history?: StatusHistoryEntry[]; includeResult?: boolean } = {}): Json {
  const body: Json = {
    task_id: task.handle ?? task.id,
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
    requestSchema: 'protocol/get-task-status-request.json',
    input: v.looseObject({
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

const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Several plugins may describe one protocol (accounts, media buys, buyer data): objects merge member by member, anything else is replaced. */
function mergeBlock(target: Json, block: Json): void {
  for (const key in block) {
    if (!Object.hasOwn(block, key)) continue;
    const value = block[key];
    const old = target[key];
    if (isObject(old) && isObject(value)) {
      const merged = { ...old };
      mergeBlock(merged, value);
      target[key] = merged;
    } else target[key] = value;
  }
}

const PROTOCOLS = ['media_buy', 'signals', 'governance', 'sponsored_intelligence', 'creative', 'brand', 'measurement'] as const;

/** What a mount's contributions give every capabilities answer: which there are, and the protocols and specialisms they list. */
interface Contributions {
  count: number;
  all: readonly CapabilityContribution[];
  supported: string[];
  specialisms: string[];
}

export function capabilitiesTask(registry: TaskRegistry, idempotency: IdempotencyPort, verifier?: RequestVerifierPort) {
  // Derived once per mount (its protocols array), again when plugins declared more (some do in start).
  const derived = new WeakMap<readonly string[], Contributions>();
  let everyProtocol: Contributions | undefined;
  const contributions = (protocols: readonly string[] | undefined): Contributions => {
    const declared = registry.capabilityContributions();
    let d = protocols ? derived.get(protocols) : everyProtocol;
    if (d?.count !== declared.length) {
      // A path-routed mount describes the agent it serves, not every agent of the deployment.
      const all = declared.filter((c) => !protocols || protocols.includes(c.protocol));
      d = {
        count: declared.length,
        all,
        supported: [...new Set(all.map((c) => c.protocol))],
        specialisms: [...new Set(all.flatMap((c) => c.specialisms ?? []))],
      };
      if (protocols) derived.set(protocols, d);
      else everyProtocol = d;
    }
    return d;
  };
  return defineTask({
    name: (ns) => `get_${ns}_capabilities`,
    description: 'What this agent supports: protocol versions, idempotency, protocols and their capabilities.',
    protocol: 'protocol',
    requestSchema: 'protocol/get-adcp-capabilities-request.json',
    auth: 'optional',
    input: v.looseObject({
      protocols: v.optional(v.pipe(v.array(v.picklist(PROTOCOLS, `must be one of ${PROTOCOLS.join(', ')}`)), v.minLength(1), v.maxLength(PROTOCOLS.length))),
      adcp_major_version: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(99))),
    }),
    handler({ input, namespace, protocols }) {
      const { all, supported, specialisms } = contributions(protocols);
      const body: Json = {
        [namespace]: {
          major_versions: [...SUPPORTED_MAJOR_VERSIONS],
          // Release-precision versions whose response schemas every answer satisfies (3.1 field; 3.0 ignores it).
          ...(namespace === 'adcp' ? { supported_versions: ['3.0', '3.1'] } : {}),
          idempotency: { supported: true, replay_ttl_seconds: idempotency.replayTtlSeconds },
        },
      };
      // `protocols` narrows the protocol blocks only: the list of supported protocols is always complete.
      if (supported.length) body.supported_protocols = [...supported];
      if (specialisms.length) body.specialisms = [...specialisms];
      const wanted = input.protocols as readonly string[] | undefined;
      for (const c of all) if (!wanted || wanted.includes(c.protocol)) mergeBlock(body, c.block ?? {});
      if (verifier) {
        const { policy } = verifier;
        body.request_signing = {
          supported: true,
          covers_content_digest: policy.coversContentDigest,
          required_for: [...policy.requiredFor],
          supported_for: [...(policy.supportedFor ?? registry.list(protocols).map((t) => t.name))],
        };
      }
      return body;
    },
  });
}
