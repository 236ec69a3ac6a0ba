import type { Queryable } from './ports/database.ts';
import type * as v from 'valibot';
import { token } from './token.ts';
import type { Principal } from './ports/auth.ts';
import type { Logger } from './log.ts';
import type { ClockPort } from './ports/clock.ts';
import type { IdsPort } from './ports/ids.ts';
import type { TaskProgress } from './ports/tasks.ts';
import type { IssueCode } from './validation.ts';
import type { RateLimitRule } from './endpoint.ts';

/**
 * Raised by a `transactional` task's handler (or its `within`) that finds an in-memory copy it
 * relied on older than the database (a catalog version check in its statements): the pipeline rolls
 * the transaction back and runs the call again, after the feature marked its copy stale.
 */
export class StaleReadError extends Error {
  override readonly name = 'StaleReadError';
  /** `refresh` brings the copy up to date; the pipeline awaits it outside the transaction, then runs the call again. */
  constructor(
    message: string,
    readonly refresh: () => Promise<unknown>,
  ) {
    super(message);
  }
}

/** JSON object as tasks exchange it. */
export type Json = Record<string, unknown>;

/** The `context` member of raw task arguments when it is an object (echoed even by failures of validation). */
export function requestContext(args: unknown): Json | undefined {
  const context = args && typeof args === 'object' && !Array.isArray(args) ? (args as Json).context : undefined;
  return context && typeof context === 'object' && !Array.isArray(context) ? (context as Json) : undefined;
}

/**
 * Asks the runtime to continue a call asynchronously. The call answers now with `status`
 * (`submitted` or `working`), a fresh task id and `partial` (body fields known already); the
 * tasks runtime later calls the definition's `resume` with `state`, at or after `runAt`.
 */
export interface Deferral {
  readonly kind: 'deferral';
  status: 'submitted' | 'working';
  message?: string;
  /** The task_id to answer instead of a fresh one (a sandbox directive named it); unique per principal, the newest wins. */
  handle?: string;
  partial?: Json;
  state: Json;
  runAt?: Date;
  progress?: TaskProgress;
  /**
   * The feature's own writes for this call (e.g. pending activations), run in the transaction that
   * creates the task record: both commit or neither. Throwing (a ProtocolError) fails the call.
   */
  within?: (tx: Queryable) => Promise<void>;
}

/** What a resumed step may answer besides a final result: run again later. */
export interface Reschedule {
  readonly kind: 'reschedule';
  state: Json;
  runAt: Date;
  status?: 'working' | 'input-required';
  message?: string;
  progress?: TaskProgress;
}

export function isDeferral(x: unknown): x is Deferral {
  return !!x && typeof x === 'object' && (x as Deferral).kind === 'deferral';
}
export function isReschedule(x: unknown): x is Reschedule {
  return !!x && typeof x === 'object' && (x as Reschedule).kind === 'reschedule';
}

/** The handle a handler uses for the asynchronous lifecycle of its call. */
export interface TaskHandle {
  /** Continue later (see Deferral); return the value from the handler. */
  defer(options: Omit<Deferral, 'kind'>): Deferral;
}

export interface IdempotencyInfo {
  /** The caller's key (present on every mutating call). */
  key: string | null;
  /** How long a replay returns the stored response. */
  replayTtlSeconds: number | null;
  /**
   * A non-transactional mutating call: store its answer in the handler's own last transaction
   * instead of a commit of its own after the handler. Give it the very object the handler then
   * returns, and call it only when nothing that can fail follows that transaction. A
   * `recordsKeyWithin` call that has not claimed records its key there (the transaction's last write,
   * travelling with its COMMIT): a key found taken fails the transaction.
   */
  keepWithin?: (tx: Queryable, result: Json) => Promise<void>;
  /**
   * A `recordsKeyWithin` call: claim the key now, before a write or an outside call its own
   * transaction would not undo (a remote check, another transaction). Resolves once the call owns
   * the key (keepWithin then completes the claim); a completed duplicate ends the call with its
   * replay. Absent once claimed.
   */
  claim?: () => Promise<void>;
}

/**
 * `answer`, kept for replays as `tx`'s last write (`idempotency.keepWithin`): sent with its COMMIT and
 * not waited for, so a failure (the key found taken) fails the transaction. Returns `answer`.
 */
export function keptWithin<T extends Json>(idempotency: IdempotencyInfo, tx: Queryable, answer: T): T {
  idempotency.keepWithin?.(tx, answer).catch(() => {});
  return answer;
}

/** Everything a task handler receives; hosts build it, features never see a transport. */
export interface TaskContext<I> {
  input: I;
  principal: Principal;
  idempotency: IdempotencyInfo;
  logger: Logger;
  clock: ClockPort;
  ids: IdsPort;
  /** The request's `context` object, echoed verbatim in responses and webhooks. */
  context: Json | undefined;
  /** The deployment's protocol namespace (`proto`, `adcp`). */
  namespace: string;
  /** Protocol groups served where the call arrived (a path-routed mount); undefined when the mount serves all. */
  protocols?: readonly string[];
  task: TaskHandle;
  /**
   * The call's transaction, given to `transactional` tasks only: the handler's statements, a
   * deferral's `within` writes, the task record and the idempotency record commit together, or
   * nothing does. Run every statement on it: the plain Database port would
   * escape the transaction on Postgres and wait for it forever on PGlite (one connection).
   * Absent in the rare fallback where another instance holds the key (the handler then runs as a
   * non-transactional task), so handlers use `ctx.tx ?? db`.
   */
  tx?: Queryable;
  /** What the task's `prepare` returned (before the transaction of a `transactional` task opened). */
  prepared?: unknown;
}

/** Context of a resumed asynchronous step (run by the tasks worker, not by a request). */
export interface ResumeContext {
  taskId: string;
  state: Json;
  principalId: string;
  context: Json | undefined;
  logger: Logger;
  clock: ClockPort;
  namespace: string;
  /** Record progress (a `working` status change with `result` = progress). */
  progress(progress: TaskProgress, message?: string): Promise<void>;
  reschedule(options: Omit<Reschedule, 'kind'>): Reschedule;
}

/**
 * Error body convention: `default` `{code, message}`; `signals` adds `{errors:[{code,message,field,suggestion}]}`;
 * `creative` adds `{error: {code, message}}` (agent-protocol "Errors", creative row).
 */
export type ErrorShape = 'default' | 'signals' | 'creative';

export interface TaskDefinition<I = any, O extends Json = Json> {
  /** Wire name; a function receives `protocol.namespace` (e.g. `get_${ns}_capabilities`). */
  name: string | ((namespace: string) => string);
  description: string;
  /** Protocol group (`protocol`, `signals`, `media_buy`...): mounts and capabilities select by it. */
  protocol: string;
  /** Other groups whose mounts serve the task too (list_creatives: a seller's and a creative agent's). */
  servedWith?: readonly string[];
  /** Valibot schema of the task's own fields; envelope fields (context, push config, key) are handled by the runtime. */
  input: v.GenericSchema<unknown, I>;
  /**
   * The AdCP request schema this task implements (`signals/get-signals-request.json`), vendored in
   * lib/adcp/schemas: in the `adcp` namespace it is the published input schema, so `input` must
   * accept (and keep) every field it allows.
   */
  requestSchema?: string;
  /** Mutating tasks require `idempotency_key` and are replay-protected. */
  mutating?: boolean;
  /**
   * A mutating task whose handler only touches the database: the pipeline runs the whole call in
   * one transaction (see TaskContext.tx), so nothing partial survives a failure and no statement
   * autocommits. Leave it off for a handler that calls the network (an ad server, a generator):
   * the transaction would hold a connection, and row locks, across the slow call.
   */
  transactional?: boolean;
  /**
   * A mutating task, not `transactional`, whose writes commit in one transaction of its own opened
   * after its reads: nothing is claimed first. Its handler records the answer there
   * (`idempotency.keepWithin`, or a deferral), so a duplicate finds the key taken at that
   * transaction's end, is rolled back and answers what the key holds, as a transactional call does.
   * Before anything that transaction would not undo, the handler calls `idempotency.claim()`.
   */
  recordsKeyWithin?: boolean;
  /**
   * Work that must stay outside a task's transaction (a remote lookup, a check of a slow
   * resource): run before the key is claimed or the transaction opens, without writes; the
   * handler gets its result as `ctx.prepared`. A failure surfaces from the handler, after the key
   * was looked at (a replay still replays).
   */
  prepare?(ctx: TaskContext<I>): Promise<unknown>;
  /** `optional` lets anonymous callers in (capabilities); default `required`. */
  auth?: 'required' | 'optional';
  /** Rate limits counted per caller (`ip` counts per caller too: a task call carries no address); needs a RateLimiter. */
  rateLimits?: readonly RateLimitRule[];
  errorShape?: ErrorShape;
  /**
   * Members every failure body of this task also carries, so failures validate against the task's
   * response schema (AdCP 3.0.6 requires `signals` even in a failed `get_signals` answer).
   */
  failureBody?: Json;
  /** Code of an input that fails validation (default INVALID_REQUEST): e.g. INVALID_FORMAT_ID for a bare-string format id. */
  inputIssueCode?: IssueCode;
  /** Task type reported by status polling and webhooks (defaults to the name). */
  taskType?: string;
  /** Return the body (without `status`), or `ctx.task.defer(...)`; raise ProtocolError on failure. */
  handler(ctx: TaskContext<I>): Promise<O | Deferral> | O | Deferral;
  /** Asynchronous continuation of a deferred call: final body, or a reschedule. */
  resume?(ctx: ResumeContext): Promise<Json | Reschedule> | Json | Reschedule;
}

export function defineTask<I, O extends Json = Json>(definition: TaskDefinition<I, O>): TaskDefinition<I, O> {
  return definition;
}

/** A definition with its name resolved for this deployment's namespace. */
export interface RegisteredTask extends TaskDefinition {
  name: string;
  taskType: string;
}

/** Per-protocol capability blocks features contribute to `get_{ns}_capabilities`. */
export interface CapabilityContribution {
  /** Value listed in `supported_protocols` (e.g. `signals`). */
  protocol: string;
  /** Extra top-level members of the capabilities response (e.g. `{signals: {...}}`); objects of several contributions merge member by member. */
  block?: Json;
  /** AdCP specialisms this protocol's tasks fully serve (`specialisms` of the response). */
  specialisms?: readonly string[];
}

/** Tasks contributed by feature plugins (in `register`); hosts read them in `start`. */
export class TaskRegistry {
  private readonly tasks = new Map<string, RegisteredTask>();
  private readonly capabilities: CapabilityContribution[] = [];

  constructor(readonly namespace: string) {}

  add(...definitions: TaskDefinition<any, any>[]): void {
    for (const d of definitions) {
      const name = typeof d.name === 'function' ? d.name(this.namespace) : d.name;
      if (!/^[a-z][a-z0-9_]{1,63}$/.test(name)) throw new Error(`Task name "${name}" must be snake_case`);
      if (this.tasks.has(name)) throw new Error(`Task "${name}" is defined twice`);
      this.tasks.set(name, { ...d, name, taskType: d.taskType ?? name } as RegisteredTask);
    }
  }

  get(name: string): RegisteredTask | undefined {
    return this.tasks.get(name);
  }

  list(protocols?: readonly string[]): RegisteredTask[] {
    const all = [...this.tasks.values()];
    if (!protocols) return all;
    // The `protocol` group (capabilities, task status) is served on every mount.
    return all.filter((t) => t.protocol === 'protocol' || protocols.includes(t.protocol) || !!t.servedWith?.some((p) => protocols.includes(p)));
  }

  declareCapability(contribution: CapabilityContribution): void {
    this.capabilities.push(contribution);
  }

  capabilityContributions(): readonly CapabilityContribution[] {
    return this.capabilities;
  }
}

export const Tasks = token<TaskRegistry>('core.task-registry');
