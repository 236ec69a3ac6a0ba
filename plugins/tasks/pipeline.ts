import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { assertSafeInput, parseChecked, parseOrThrow } from '../../core/validation.ts';
import {
  isDeferral,
  requestContext,
  StaleReadError,
  type Deferral,
  type Json,
  type RegisteredTask,
  type TaskContext,
  type TaskRegistry,
} from '../../core/task.ts';
import type { Logger } from '../../core/log.ts';
import { authenticateRequest, type AuthPort, type Principal } from '../../core/ports/auth.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import { IDEMPOTENCY_KEY_PATTERN, type IdempotencyClaim, type IdempotencyFound, type IdempotencyPort } from '../../core/ports/idempotency.ts';
import type { TaskNotifierPort } from '../../core/ports/task-notifier.ts';
import type { TaskCall, TaskOutcome } from '../../core/ports/task-gateway.ts';
import { TASK_STATUSES, type A2aPushConfig, type NewTask, type TaskStatus } from '../../core/ports/tasks.ts';
import type { RequestVerifierPort } from '../../core/ports/request-verifier.ts';
import type { TaskRepository } from './store.ts';
import { DatabaseUnavailableError, type DatabasePort, type Queryable } from '../../core/ports/database.ts';
import { payloadHash } from '../../lib/canonical-json.ts';
import { declareJson, declaredMembers, JsonPiece } from '../../lib/prebuilt-json.ts';
import { enforceRateLimits, operationPipeline } from '../../core/operation.ts';
import type { RateLimiterPort } from '../../core/ports/rate-limit.ts';
import { standardErrorCode } from '../../lib/adcp/error-codes.ts';

const httpUrl = v.pipe(
  v.string(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  v.url('must be an absolute URL'),
  v.regex(/^https?:\/\//i, 'must be an http(s) URL'),
);
const authentication = v.strictObject({
  schemes: v.pipe(v.array(v.picklist(['Bearer', 'HMAC-SHA256'], 'must be Bearer or HMAC-SHA256')), v.length(1, 'must hold exactly one scheme')),
  credentials: v.pipe(v.string('is required'), v.minLength(32, 'must be at least 32 characters'), v.maxLength(4096)),
});

const operationId = v.pipe(
  v.string('is required (correlation id echoed in every webhook)'),
  v.regex(/^[A-Za-z0-9_.:-]{1,255}$/, 'must match ^[A-Za-z0-9_.:-]{1,255}$'),
);

/**
 * `push_notification_config` (agent-protocol "Push notification config"). The spec lets sellers
 * refuse a registration without `operation_id` (receivers correlate on it); AdCP 3.0 has no such
 * field, so the tasks plugin's `pushOperationId` option decides.
 */
export function pushNotificationConfigSchema(requireOperationId: boolean) {
  return v.object({
    url: httpUrl,
    operation_id: requireOperationId ? operationId : v.optional(operationId),
    token: v.optional(v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters'), v.maxLength(4096))),
    authentication: v.optional(authentication),
  });
}
type PushNotificationConfigInput = v.InferOutput<ReturnType<typeof pushNotificationConfigSchema>>;

/** A2A-native registration (`configuration.pushNotificationConfig`), in the task store's shape. */
export const a2aPushConfigSchema = v.object({
  url: httpUrl,
  id: v.optional(v.pipe(v.string(), v.maxLength(255))),
  token: v.optional(v.pipe(v.string(), v.maxLength(4096))),
  authentication: v.optional(authentication),
});

/** Envelope members every task accepts; the pipeline handles them so features do not. */
export function envelopeSchema(requireOperationId: boolean) {
  return v.object({
    context: v.optional(v.record(v.string(), v.unknown(), 'must be an object')),
    push_notification_config: v.optional(pushNotificationConfigSchema(requireOperationId)),
    idempotency_key: v.optional(v.pipe(v.string(), v.regex(IDEMPOTENCY_KEY_PATTERN, 'must match ^[A-Za-z0-9_.:-]{16,255}$'))),
  });
}
type Envelope = v.InferOutput<ReturnType<typeof envelopeSchema>>;
/** AdCP major versions every task answers in (capabilities' `major_versions`). */
export const SUPPORTED_MAJOR_VERSIONS: readonly number[] = [3];

/** Both variants built once (a schema per call would be rebuilt on every request). */
const ENVELOPES = { required: envelopeSchema(true), optional: envelopeSchema(false) };
/** The members the envelope schemas check, and the envelope of a call that has none of them (what the schemas would return for it). */
const ENVELOPE_KEYS = Object.keys(ENVELOPES.optional.entries);
const NO_ENVELOPE: Envelope = Object.freeze({});

export interface PipelineOptions {
  /** Refuse push registrations without `operation_id`. */
  requireOperationId: boolean;
  /** Authorization servers named in protected-resource metadata (none: no metadata is published). */
  authorizationServers: readonly string[];
  /** The issuer to name to a client that reached the deployment at a base URL (TokenVerifierPort.issuerFor). */
  issuerFor?: (base: string | null) => string;
}

export interface PipelineDeps {
  registry: TaskRegistry;
  /** Transactions of `transactional` tasks and deferred calls. */
  db: DatabasePort;
  auth: AuthPort;
  idempotency: IdempotencyPort;
  repo: TaskRepository;
  notifier: TaskNotifierPort | undefined;
  clock: ClockPort;
  ids: IdsPort;
  logger: Logger;
  /** Verifies buyer-signed requests (the request-signing plugin), when the deployment has it. */
  verifier?: RequestVerifierPort;
  /** Counts the rate limits tasks declare (required by assembly when one does). */
  limiter?: RateLimiterPort;
  options: PipelineOptions;
}

const ANONYMOUS: Principal = {
  id: 'anonymous',
  orgId: '00000000-0000-0000-0000-000000000000',
  orgName: 'anonymous',
  tier: 'public',
  kind: 'test_token',
};

/** `ctx.task`: the same for every call (it holds no call state). */
const HANDLE: TaskContext<unknown>['task'] = { defer: (options) => ({ kind: 'deferral', ...options }) };

/** The caller of a task; an `optional` task without a credential runs as the anonymous principal. */
export async function taskPrincipal(
  auth: AuthPort,
  authorization: string | null,
  mode: 'required' | 'optional' = 'required',
  resource?: string,
): Promise<Principal> {
  return (await authenticateRequest(auth, authorization, mode, undefined, resource)) ?? ANONYMOUS;
}

/**
 * In the `adcp` namespace an error carries a standard AdCP code (lib/adcp/error-codes.ts); a seed
 * code outside the enums moves to `details.code`.
 */
function standardized(item: Json, status: number): Json {
  const code = standardErrorCode(String(item.code), status);
  if (code === item.code) return item;
  return { ...item, code, details: { ...((item.details as Json | undefined) ?? {}), code: item.code } };
}

/**
 * The failure body every host sends (in its own wire shape): top-level `status: failed`,
 * `{code, message}` for MCP-style readers, `errors[]` (the signals shape and SUPPLEMENT's task
 * results), `{ns}_error` (the protocol envelope's error member), the task's `failureBody` and, for the
 * creative shape, `error: {code, message}`.
 */
export function errorBody(error: ProtocolError, namespace: string, context?: Json, task?: RegisteredTask): Json {
  const adcp = namespace === 'adcp';
  const taskError = adcp ? standardized(error.toTaskError(), error.status) : error.toTaskError();
  const extra = Array.isArray(error.extra?.errors) ? (error.extra!.errors as Json[]) : null;
  const extraErrors = extra && adcp ? extra.map((e) => standardized(e, error.status)) : extra;
  const body: Json = { ...(task?.failureBody ?? {}), status: 'failed', code: taskError.code, message: error.message };
  if (error.field !== undefined) body.field = error.field;
  if (error.suggestion !== undefined) body.suggestion = error.suggestion;
  if (error.retryAfter !== undefined) body.retry_after = error.retryAfter;
  body.errors = extraErrors ?? [taskError];
  body[`${namespace}_error`] = taskError;
  // Creative tasks: HTTP-style status and `{error: {code, message}}` (agent-protocol "Errors").
  if (task?.errorShape === 'creative') body.error = { code: taskError.code, message: error.message };
  if (context) body.context = context;
  return body;
}

function toError(error: unknown, logger: Logger): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof DatabaseUnavailableError)
    return new ProtocolError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry later', { retryAfter: error.retryAfter });
  if (error instanceof StaleReadError) return new ProtocolError('SERVICE_UNAVAILABLE', 'The catalog is being changed; retry shortly', { retryAfter: 1 });
  logger.error({ err: error }, 'task failed unexpectedly');
  return new ProtocolError('SERVICE_UNAVAILABLE', 'The task failed unexpectedly; retry later', { status: 500, recovery: 'transient' });
}

/** Validate both push registrations now, with the checks delivery would make later. */
function checkRegistrations(
  deps: PipelineDeps,
  task: RegisteredTask,
  push: PushNotificationConfigInput | undefined,
  a2aRaw: unknown,
): A2aPushConfig | undefined {
  const a2a = a2aRaw === undefined ? undefined : parseOrThrow(a2aPushConfigSchema, a2aRaw, 'configuration.pushNotificationConfig');
  if (!push && !a2a) return undefined;
  if (!task.resume) return a2a; // a synchronous task never sends webhooks
  if (!deps.notifier) {
    throw new ProtocolError('UNSUPPORTED_FEATURE', 'This agent does not send push notifications; poll the task instead', {
      field: push ? 'push_notification_config' : 'configuration.pushNotificationConfig',
    });
  }
  deps.notifier.checkRegistration({ push, a2a, mutating: !!task.mutating });
  return a2a;
}

/** One task call as it goes through the stages; each stage fills in what the next ones read. */
interface TaskState {
  deps: PipelineDeps;
  call: TaskCall;
  task: RegisteredTask;
  raw: Json;
  /** Echoed by every answer, failures included, as soon as it can be read. */
  context: Json | undefined;
  principal?: Principal;
  /** The call past validation, as `answer` needs it. */
  c?: Call;
  /** How the response is kept for replays, and the transaction of a transactional call. */
  keep: Keep | null;
  tx: Queryable | null;
  result?: Json | Deferral;
  /** The answer the handler stored in its own transaction (IdempotencyInfo.keepWithin). */
  keptWithin?: { result: Json; body: Json };
  /** The task's `prepare` failed: thrown where the handler would run. */
  prepareError?: { error: unknown };
}

/** Runs of a transactional call whose handler read an outdated in-memory copy (StaleReadError). */
const STALE_RUNS = 3;

/**
 * The task kind of the one operation pipeline (core/operation.ts): authenticate, validate envelope,
 * input and push registrations (INVALID_REQUEST naming the field, before anything is stored), rate
 * limits the task declares, claim the idempotency key or replay, run the handler, and store the
 * answer: a deferred call's task record and its replay response commit in one transaction. A
 * `transactional` task runs the handler and the answer (task record, idempotency record) in one
 * transaction instead, claiming nothing first.
 */
const runTask = operationPipeline<TaskState, TaskOutcome>([
  {
    name: 'auth',
    run(s, next) {
      const { deps, call, task } = s;
      // Admitted callers (every host's usual path) need no await: no async hop per stage that has nothing to wait for.
      if (call.admitted) {
        s.principal = admittedPrincipal(call.admitted.principal, task);
        return next(s);
      }
      return taskPrincipal(deps.auth, call.authorization, task.auth, call.resource).then((principal) => {
        s.principal = principal;
        return next(s);
      });
    },
  },
  {
    name: 'validate',
    run(s, next) {
      const { deps, call, task, raw } = s;
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
        throw new ProtocolError('INVALID_REQUEST', 'arguments: must be a JSON object', { field: 'arguments' });
      assertSafeInput(raw);
      // Most calls carry no envelope member: nothing for the envelope schema to check.
      const envelope = ENVELOPE_KEYS.every((k) => (raw as Record<string, unknown>)[k] === undefined)
        ? NO_ENVELOPE
        : parseChecked(deps.options.requireOperationId ? ENVELOPES.required : ENVELOPES.optional, raw);
      s.context = envelope.context;
      const major = raw.adcp_major_version;
      // A well-formed version this agent does not speak is version negotiation, not a malformed request.
      if (Number.isInteger(major) && !SUPPORTED_MAJOR_VERSIONS.includes(major as number)) {
        throw new ProtocolError(
          'VERSION_UNSUPPORTED',
          `adcp_major_version ${major} is not supported; this agent speaks ${SUPPORTED_MAJOR_VERSIONS.join(', ')}`,
          {
            field: 'adcp_major_version',
            status: 400,
            suggestion: 'Call get_adcp_capabilities without adcp_major_version and retry with one of its major_versions',
          },
        );
      }
      const input = parseChecked(task.input, raw, '', task.inputIssueCode);
      const a2aPush = checkRegistrations(deps, task, envelope.push_notification_config, call.a2aPush);
      const ctx: TaskContext<unknown> = {
        input,
        principal: s.principal!,
        idempotency: { key: null, replayTtlSeconds: deps.idempotency.replayTtlSeconds },
        logger: deps.logger,
        clock: deps.clock,
        ids: deps.ids,
        context: s.context,
        namespace: deps.registry.namespace,
        protocols: call.protocols,
        task: HANDLE,
      };
      s.c = { deps, task, principal: s.principal!, envelope, call, a2aPush, ctx };
      return next(s);
    },
  },
  {
    name: 'limits',
    run(s, next) {
      // Assembly refuses a task with rate limits and no limiter (assertStageProviders); tasks count per caller.
      if (!s.task.rateLimits?.length) return next(s);
      return enforceRateLimits(s.task.rateLimits, s.deps.limiter!, s.principal!, () => s.principal!.id).then(() => next(s));
    },
  },
  {
    name: 'idempotency',
    run(s, next) {
      const then = s.task.mutating ? claimOrReplay : (t: TaskState, n: typeof next) => n(t);
      if (!s.task.prepare) return then(s, next);
      // Its failure is thrown by the handler stage: inside the call's transaction, so a replay still replays.
      const prepare = s.task.prepare;
      return new Promise((resolve) => resolve(prepare(s.c!.ctx))).then(
        (prepared) => {
          s.c!.ctx.prepared = prepared;
          return then(s, next);
        },
        (error: unknown) => {
          s.prepareError = { error };
          return then(s, next);
        },
      );
    },
  },
  {
    name: 'handler',
    run(s, next) {
      const ctx = s.c!.ctx;
      if (s.prepareError) throw s.prepareError.error;
      const result = s.task.handler(s.tx ? { ...ctx, tx: s.tx } : ctx);
      // A synchronous handler's answer goes on without an await (a thenable is awaited, as `await` would).
      if (typeof (result as Partial<PromiseLike<unknown>> | null)?.then !== 'function') {
        s.result = result as Json | Deferral;
        return next(s);
      }
      return Promise.resolve(result).then((r) => {
        s.result = r;
        return next(s);
      });
    },
  },
  {
    name: 'respond',
    run(s) {
      // The handler stored this very answer in its own transaction (keepWithin): nothing left to keep.
      const kept = s.keptWithin?.result === s.result ? s.keptWithin : undefined;
      if (kept) return Promise.resolve({ ok: true, status: 'completed', body: kept.body, task: s.task } as TaskOutcome);
      return answer(s.c!, s.result!, s.keep, s.tx);
    },
  },
]);

/** The idempotency stage of a mutating call: claim its key (or record it in the call's transaction), or replay. */
async function claimOrReplay(s: TaskState, next: (s: TaskState) => Promise<TaskOutcome>): Promise<TaskOutcome> {
  const { deps, task } = s;
  const c = s.c!;
  const key = c.envelope.idempotency_key;
  if (!key) {
    throw new ProtocolError('INVALID_REQUEST', 'idempotency_key: is required on mutating tasks', {
      field: 'idempotency_key',
      suggestion: 'Send a unique key (UUID v4 recommended) and reuse it only to retry the same request',
    });
  }
  c.ctx.idempotency.key = key;
  // The hash covers the operation, not the envelope: a retry with a new context replays.
  const hash = payloadHash(s.raw);
  if (task.transactional || task.recordsKeyWithin) {
    // Handler, writes, task record and idempotency record (the key's first use, written last) in one transaction:
    // the pipeline's, or the handler's own (recordsKeyWithin). When the key turns out to be taken, or the call fails,
    // what the key holds decides: a duplicate that completed meanwhile is replayed, a committed in-flight claim is
    // waited for below.
    for (let run = 1; ; run++) {
      try {
        if (!task.transactional) return await recordWithin(s, next, key, hash);
        return await deps.db.transaction((tx) => {
          s.tx = tx;
          s.keep = { record: { key, hash } };
          return next(s);
        });
      } catch (caught) {
        s.tx = null;
        // Claimed on demand (recordsKeyWithin): failed as a claimed call fails.
        const claim = s.keep && 'claim' in s.keep ? s.keep.claim : undefined;
        if (claim) await deps.idempotency.release(claim).catch((e) => deps.logger.error({ err: e }, 'idempotency release failed'));
        if (caught instanceof StaleReadError && run < STALE_RUNS) {
          await caught.refresh();
          continue;
        }
        if (claim) throw caught;
        const found = caught instanceof Verdict ? caught.found : await deps.idempotency.lookup(c.principal.id, key, task.name, hash);
        // The key was taken at COMMIT and is gone again (a released claim): wait as a non-transactional call, as `record` has it.
        const atCommit = s.keep && 'record' in s.keep ? s.keep.record.atCommit : undefined;
        if (found.kind === 'none' && atCommit && (await atCommit.catch(() => true)) === false) break;
        if (found.kind === 'none') throw caught;
        if (found.kind === 'replay') return replayed(task, found.response, s.context);
        break; // busy: another caller holds a committed claim; wait for it as a non-transactional call
      }
    }
  }
  const begun = await deps.idempotency.begin(c.principal.id, key, task.name, hash);
  if (begun.kind === 'replay') return replayed(task, begun.response, s.context);
  claimed(s, begun.claim);
  try {
    return await next(s);
  } catch (caught) {
    await deps.idempotency.release(begun.claim).catch((e) => deps.logger.error({ err: e }, 'idempotency release failed'));
    throw caught;
  }
}

/** The call owns the key: its handler's own transaction completes the claim (keepWithin). */
function claimed(s: TaskState, claim: IdempotencyClaim): void {
  const c = s.c!;
  s.keep = { claim };
  c.ctx.idempotency.claim = undefined;
  c.ctx.idempotency.keepWithin = (tx, result) => {
    const body = completedBody(c, result);
    s.keptWithin = { result, body };
    return c.deps.idempotency.complete(claim, body, tx);
  };
}

/**
 * A recordsKeyWithin call, unclaimed: its handler records the key as the last write of its own
 * transaction (sent with its COMMIT when the port can), or claims it first when asked to.
 */
function recordWithin(s: TaskState, next: (s: TaskState) => Promise<TaskOutcome>, key: string, hash: string): Promise<TaskOutcome> {
  const c = s.c!;
  const { idempotency } = c.deps;
  const record: KeyRecord = { key, hash };
  s.keep = { record };
  c.ctx.idempotency.keepWithin = (tx, result) => {
    const body = completedBody(c, result);
    s.keptWithin = { result, body };
    return sendWithCommit(c, record, body, tx) ?? keepResponse(c, { record }, body, tx);
  };
  c.ctx.idempotency.claim = async () => {
    const begun = await idempotency.begin(c.principal.id, key, c.task.name, hash);
    if (begun.kind === 'replay') throw new Verdict(begun);
    claimed(s, begun.claim);
  };
  return next(s);
}

/** The one entry of every host's task call: never throws for a caller's mistake (see TaskGatewayPort.invoke). */
export async function invokeTask(deps: PipelineDeps, call: TaskCall): Promise<TaskOutcome> {
  const task = deps.registry.get(call.name);
  const raw = (call.input ?? {}) as Json;
  const state: TaskState = { deps, call, task: task!, raw, context: requestContext(raw), keep: null, tx: null };
  try {
    if (!task || (call.protocols && !deps.registry.list(call.protocols).includes(task))) {
      throw new ProtocolError('INVALID_REQUEST', `Unknown task "${String(call.name).slice(0, 80)}"`, { field: 'name', status: 404 });
    }
    return await runTask(state);
  } catch (caught) {
    const error = toError(caught, deps.logger);
    return { ok: false, error, body: errorBody(error, deps.registry.namespace, state.context, task), task };
  }
}

/** The key of a transactional call is taken (replay, or busy): rolls the transaction back. */
class Verdict {
  constructor(readonly found: IdempotencyFound) {}
}

/** How a mutating call keeps its response for replays: completing its claim, or recording the key in the call's transaction. */
type Keep = { claim: IdempotencyClaim } | { record: KeyRecord };
/** A key recorded in the call's transaction; `atCommit` once sent with its COMMIT (false: the key was taken). */
type KeyRecord = { key: string; hash: string; atCommit?: Promise<boolean> };

/**
 * Record the key as `tx`'s last write, sent with its COMMIT (one round trip less) when the port can:
 * a key already taken fails the transaction, and claimOrReplay answers what it holds. Settles with
 * the statement, never rejects; null when the port cannot (record it with keepResponse).
 */
function sendWithCommit(c: Call, record: KeyRecord, body: Json, tx: Queryable): Promise<void> | null {
  const { idempotency } = c.deps;
  if (!idempotency.recordAtCommit) return null;
  record.atCommit = idempotency.recordAtCommit(tx, c.principal.id, record.key, c.task.name, record.hash, body);
  return record.atCommit.then(
    () => {},
    () => {},
  );
}

async function keepResponse(c: Call, keep: Keep | null, body: Json, q: Queryable | undefined): Promise<void> {
  if (!keep) return;
  if ('claim' in keep) return c.deps.idempotency.complete(keep.claim, body, q);
  // Recorded after writes committed without it, a key found taken would mean the call ran twice.
  if (!q) throw new Error(`task ${c.task.name} answered without keeping its answer in its transaction (idempotency.keepWithin) or claiming first`);
  const found = await c.deps.idempotency.record(q, c.principal.id, keep.record.key, c.task.name, keep.record.hash, body);
  if (found.kind !== 'recorded') throw new Verdict(found);
}

/** A call past validation, as `answer` needs it. */
interface Call {
  deps: PipelineDeps;
  task: RegisteredTask;
  principal: Principal;
  envelope: Envelope;
  call: TaskCall;
  a2aPush: A2aPushConfig | undefined;
  ctx: TaskContext<unknown>;
}

/** The stored response of an earlier call with this key, with `replayed: true` and this call's context. */
function replayed(task: RegisteredTask, response: Json, context: Json | undefined): TaskOutcome {
  // A body's own `status` may be a resource's (3.0 create_media_buy): the task itself completed.
  const status = TASK_STATUSES.includes(response.status as TaskStatus) ? (response.status as TaskStatus) : 'completed';
  const { context: _first, ...stored } = response;
  const body: Json = { ...stored, replayed: true };
  if (context) body.context = context;
  return { ok: true, status, body, taskId: response.task_id as string | undefined, task };
}

/**
 * Store the handler's answer: a deferral's task record, and the response for replays (`keep`).
 * With `tx` (a transactional call) everything goes into it; without, a deferral's writes get a
 * transaction of their own and a completed answer's response is stored on its own.
 */
function answer(c: Call, result: Json | Deferral, keep: Keep | null, tx: Queryable | null): Promise<TaskOutcome> {
  if (isDeferral(result)) return recordDeferral(c, result, keep, tx);
  const body = completedBody(c, result);
  const outcome: TaskOutcome = { ok: true, status: 'completed', body, task: c.task };
  if (keep && 'record' in keep && tx && sendWithCommit(c, keep.record, body, tx)) return Promise.resolve(outcome);
  // A read keeps nothing: no await.
  return keep ? keepResponse(c, keep, body, tx ?? undefined).then(() => outcome) : Promise.resolve(outcome);
}

/** The body of a completed call: `{status, ...result, context}`. */
function completedBody(c: Call, result: Json): Json {
  const body: Json = { status: 'completed', ...result };
  if (c.ctx.context) body.context = c.ctx.context;
  carryJson(result, body);
  return body;
}

const STATUS_COMPLETED = JsonPiece.text('"status":"completed"');
const COMMA = JsonPiece.text(',');

/** A result's declared JSON (lib/prebuilt-json.ts) carried over to the body wrapping it (`{status, ...result, context}`). */
function carryJson(result: Json, body: Json): void {
  const members = declaredMembers(result);
  if (!members || 'status' in result || 'context' in result) return;
  const parts = [STATUS_COMPLETED, ...(members.length ? [COMMA, ...members] : [])];
  if (body.context) parts.push(`,"context":${JSON.stringify(body.context)}`);
  declareJson(body, parts);
}

/** The principal `admit` resolved; without a credential only `optional` tasks run (as the anonymous caller). */
function admittedPrincipal(principal: Principal | null, task: RegisteredTask): Principal {
  if (principal) return principal;
  if (task.auth === 'optional') return ANONYMOUS;
  throw new ProtocolError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <token>');
}

async function recordDeferral(c: Call, deferral: Deferral, keep: Keep | null, tx: Queryable | null): Promise<TaskOutcome> {
  const { deps, task, principal, envelope, call, a2aPush } = c;
  if (!task.resume) throw new Error(`Task "${task.name}" deferred but defines no resume step`);
  const id = deps.ids.uuid7();
  const partial = deferral.partial ?? {};
  const body: Json = { status: deferral.status, task_id: deferral.handle ?? id };
  if (deferral.message) body.message = deferral.message;
  Object.assign(body, partial);
  if (envelope.context) body.context = envelope.context;
  const record: NewTask = {
    id,
    handle: deferral.handle,
    taskType: task.taskType,
    protocol: task.protocol,
    principalId: principal.id,
    status: deferral.status,
    message: deferral.message,
    progress: deferral.progress,
    result: partial,
    context: envelope.context,
    contextId: call.contextId,
    pushNotificationConfig: envelope.push_notification_config,
    a2aPushConfig: a2aPush,
    state: deferral.state,
    runAt: deferral.runAt,
    within: deferral.within,
  };
  // The feature's writes, the task record and the replay response commit together: a crash
  // cannot leave a task whose retry executes again. Issued together: one round trip for all.
  const store = async (q: Queryable) => {
    const [created, kept] = await Promise.allSettled([deps.repo.createIn(q, record), keepResponse(c, keep, body, q)]);
    // The key's verdict wins: a duplicate's committed record explains a failed write of ours (and
    // after a failed statement, the ones behind it only report the aborted transaction).
    if (kept.status === 'rejected' && (kept.reason instanceof Verdict || kept.reason instanceof ProtocolError)) throw kept.reason;
    if (created.status === 'rejected') throw created.reason;
    if (kept.status === 'rejected') throw kept.reason;
  };
  await (tx ? store(tx) : deps.db.transaction(store));
  return { ok: true, status: deferral.status, body, taskId: id, task };
}
