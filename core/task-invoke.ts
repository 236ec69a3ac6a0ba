import * as v from 'valibot';
import { ProtocolError } from './errors.ts';
import { parseOrThrow } from './validation.ts';
import { payloadHash } from './canonical-json.ts';
import { isDeferral, type Deferral, type Json, type RegisteredTask, type TaskContext, type TaskRegistry } from './task.ts';
import type { Logger } from './log.ts';
import type { AuthPort, Principal } from './ports/auth.ts';
import type { ClockPort } from './ports/clock.ts';
import type { IdsPort } from './ports/ids.ts';
import { IDEMPOTENCY_KEY_PATTERN, type IdempotencyClaim, type IdempotencyPort } from './ports/idempotency.ts';
import type { A2aPushConfig, TaskStatus, TaskStorePort } from './ports/tasks.ts';

/** `push_notification_config` (agent-protocol "Push notification config"). */
export const pushNotificationConfigSchema = v.object({
  url: v.pipe(
    v.string(),
    v.maxLength(2048, 'must be at most 2048 characters'),
    v.url('must be an absolute URL'),
    v.regex(/^https?:\/\//i, 'must be an http(s) URL'),
  ),
  // Required here (the spec lets sellers refuse a registration without it): receivers correlate on it.
  operation_id: v.pipe(v.string('is required (correlation id echoed in every webhook)'), v.regex(/^[A-Za-z0-9_.:-]{1,255}$/, 'must match ^[A-Za-z0-9_.:-]{1,255}$')),
  token: v.optional(v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters'), v.maxLength(4096))),
  authentication: v.optional(
    v.strictObject({
      schemes: v.pipe(v.array(v.picklist(['Bearer', 'HMAC-SHA256'], 'must be Bearer or HMAC-SHA256')), v.length(1, 'must hold exactly one scheme')),
      credentials: v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters'), v.maxLength(4096)),
    }),
  ),
});

/** Envelope members every task accepts; the runtime handles them so features do not. */
const envelopeSchema = v.object({
  context: v.optional(v.record(v.string(), v.unknown(), 'must be an object')),
  push_notification_config: v.optional(pushNotificationConfigSchema),
  idempotency_key: v.optional(v.pipe(v.string(), v.regex(IDEMPOTENCY_KEY_PATTERN, 'must match ^[A-Za-z0-9_.:-]{16,255}$'))),
});

export interface InvokeDeps {
  registry: TaskRegistry;
  auth?: AuthPort;
  idempotency?: IdempotencyPort;
  store?: TaskStorePort;
  clock: ClockPort;
  ids: IdsPort;
  logger: Logger;
}

export interface InvokeRequest {
  name: string;
  input: unknown;
  /** Bearer credential, or null when none was sent. */
  credential: string | null;
  /** A2A-native push registration (`configuration.pushNotificationConfig`). */
  a2aPush?: A2aPushConfig;
  /** A2A context id. */
  contextId?: string;
  /** Restrict to tasks of these protocol groups (a path-routed mount). */
  protocols?: readonly string[];
}

export type InvokeOutcome =
  | { ok: true; status: TaskStatus; body: Json; taskId?: string; task: RegisteredTask }
  | { ok: false; error: ProtocolError; body: Json; task?: RegisteredTask };

const ANONYMOUS: Principal = {
  id: 'anonymous',
  orgId: '00000000-0000-0000-0000-000000000000',
  orgName: 'anonymous',
  tier: 'public',
  kind: 'test_token',
};

/** Resolve the caller; null credential on an `optional` task gives the anonymous principal. */
export async function resolvePrincipal(auth: AuthPort | undefined, credential: string | null, mode: 'required' | 'optional' = 'required'): Promise<Principal> {
  if (!credential) {
    if (mode === 'optional') return ANONYMOUS;
    throw new ProtocolError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <token>', { status: 401 });
  }
  const principal = auth ? await auth.authenticate(credential) : null;
  if (!principal) throw new ProtocolError('UNAUTHORIZED', 'Invalid or revoked credential', { status: 401 });
  return principal;
}

/**
 * The failure body every host sends (in its own wire shape): top-level `status: failed`,
 * `{code, message}` for MCP-style readers, `errors[]` (the signals shape and SUPPLEMENT's task
 * results), and `{ns}_error` (the protocol envelope's error member).
 */
export function errorBody(error: ProtocolError, namespace: string, context?: Json): Json {
  const taskError = error.toTaskError();
  const extraErrors = Array.isArray(error.extra?.errors) ? (error.extra!.errors as Json[]) : null;
  const body: Json = { status: 'failed', code: error.code, message: error.message };
  if (error.field !== undefined) body.field = error.field;
  if (error.suggestion !== undefined) body.suggestion = error.suggestion;
  if (error.retryAfter !== undefined) body.retry_after = error.retryAfter;
  body.errors = extraErrors ?? [taskError];
  body[`${namespace}_error`] = taskError;
  if (context) body.context = context;
  return body;
}

function toError(error: unknown, logger: Logger): ProtocolError {
  if (error instanceof ProtocolError) return error;
  logger.error({ err: error }, 'task failed unexpectedly');
  return new ProtocolError('SERVICE_UNAVAILABLE', 'The task failed unexpectedly; retry later', { status: 500, recovery: 'transient' });
}

/**
 * The one pipeline behind every host: find the task, authenticate, validate envelope and input
 * (INVALID_REQUEST naming the field, before anything is stored), idempotency claim/replay, run
 * the handler, record a durable task for a deferred call, store the response for replays.
 */
export async function invokeTask(deps: InvokeDeps, request: InvokeRequest): Promise<InvokeOutcome> {
  const ns = deps.registry.namespace;
  const task = deps.registry.get(request.name);
  let context: Json | undefined;
  let claim: IdempotencyClaim | null = null;
  try {
    if (!task || (request.protocols && !deps.registry.list(request.protocols).includes(task))) {
      throw new ProtocolError('INVALID_REQUEST', `Unknown task "${String(request.name).slice(0, 80)}"`, { field: 'name', status: 404 });
    }
    const principal = await resolvePrincipal(deps.auth, request.credential, task.auth);
    const raw = request.input ?? {};
    if (typeof raw !== 'object' || Array.isArray(raw)) throw new ProtocolError('INVALID_REQUEST', 'arguments: must be a JSON object', { field: 'arguments' });
    const rawInput = raw as Json;
    const envelope = parseOrThrow(envelopeSchema, rawInput);
    context = envelope.context;
    const input = parseOrThrow(task.input, rawInput);

    let key: string | null = null;
    if (task.mutating) {
      if (!envelope.idempotency_key) {
        throw new ProtocolError('INVALID_REQUEST', 'idempotency_key: is required on mutating tasks', {
          field: 'idempotency_key',
          suggestion: 'Send a unique key (UUID v4 recommended) and reuse it only to retry the same request',
        });
      }
      key = envelope.idempotency_key;
      if (deps.idempotency) {
        const begun = await deps.idempotency.begin(principal.id, key, task.name, payloadHash(rawInput));
        if (begun.kind === 'replay') {
          const status = (begun.response.status as TaskStatus) ?? 'completed';
          return { ok: true, status, body: { ...begun.response, replayed: true }, taskId: begun.response.task_id as string | undefined, task };
        }
        claim = begun.claim;
      }
    }

    const ctx: TaskContext<unknown> = {
      input,
      principal,
      idempotency: { key, replayTtlSeconds: deps.idempotency?.replayTtlSeconds ?? null },
      logger: deps.logger,
      clock: deps.clock,
      ids: deps.ids,
      context,
      namespace: ns,
      task: { defer: (options) => ({ kind: 'deferral', ...options }) },
    };
    const result = await task.handler(ctx);

    let outcome: InvokeOutcome;
    if (isDeferral(result)) {
      outcome = await recordDeferral(deps, task, principal, result, envelope, request);
    } else {
      const body: Json = { status: 'completed', ...result };
      if (context) body.context = context;
      outcome = { ok: true, status: 'completed', body, task };
    }
    if (claim) await deps.idempotency!.complete(claim, outcome.body);
    return outcome;
  } catch (caught) {
    if (claim) await deps.idempotency!.release(claim).catch((e) => deps.logger.error({ err: e }, 'idempotency release failed'));
    const error = toError(caught, deps.logger);
    return { ok: false, error, body: errorBody(error, ns, context), task };
  }
}

async function recordDeferral(
  deps: InvokeDeps,
  task: RegisteredTask,
  principal: Principal,
  deferral: Deferral,
  envelope: { context?: Json; push_notification_config?: v.InferOutput<typeof pushNotificationConfigSchema> },
  request: InvokeRequest,
): Promise<InvokeOutcome> {
  if (!deps.store) throw new Error(`Task "${task.name}" deferred but no task store is configured (add the tasks plugin)`);
  if (!task.resume) throw new Error(`Task "${task.name}" deferred but defines no resume step`);
  const partial = deferral.partial ?? {};
  const record = await deps.store.create({
    taskType: task.taskType,
    protocol: task.protocol,
    principalId: principal.id,
    status: deferral.status,
    message: deferral.message,
    progress: deferral.progress,
    result: partial,
    context: envelope.context,
    contextId: request.contextId,
    pushNotificationConfig: envelope.push_notification_config,
    a2aPushConfig: request.a2aPush,
    state: deferral.state,
    runAt: deferral.runAt,
    within: deferral.within,
  });
  const body: Json = { status: deferral.status, task_id: record.id };
  if (deferral.message) body.message = deferral.message;
  Object.assign(body, partial);
  if (envelope.context) body.context = envelope.context;
  return { ok: true, status: deferral.status, body, taskId: record.id, task };
}
