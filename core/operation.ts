import { ProtocolError } from './errors.ts';
import { ConfigError } from './config-error.ts';
import type { Token } from './token.ts';
import type { AuthMode, RateLimitRule } from './endpoint.ts';
import { Auth, type Principal } from './ports/auth.ts';
import { RateLimiter, type RateLimiterPort } from './ports/rate-limit.ts';
import { Idempotency } from './ports/idempotency.ts';

/**
 * The one operation pipeline. Every operation, a REST/MCP endpoint or a protocol task over any
 * transport, passes these stages in this order; each kind of operation supplies its stage
 * implementations (tasks add idempotency, endpoints skip it) and `operationPipeline` runs them.
 */
export const STAGES = ['auth', 'validate', 'limits', 'idempotency', 'handler', 'respond'] as const;
export type StageName = (typeof STAGES)[number];

/** One stage: does its part with `state`, then calls `next(state)` (any number of times: a retried transaction runs the rest again). */
export interface Stage<S, R> {
  readonly name: StageName;
  run(state: S, next: (state: S) => Promise<R>): Promise<R>;
}

/**
 * Compose stages into a runner; checked once here: known stages, in pipeline order, each at most once.
 * The chain is built once, so a call allocates nothing for it (this runs on every request).
 */
export function operationPipeline<S, R>(stages: readonly Stage<S, R>[]): (state: S) => Promise<R> {
  let last = -1;
  for (const stage of stages) {
    const at = STAGES.indexOf(stage.name);
    if (at <= last) throw new Error(`operation stages must follow ${STAGES.join(' -> ')}; "${stage.name}" is out of order or repeated`);
    last = at;
  }
  let run: (state: S) => Promise<R> = () => Promise.reject(new Error('the operation pipeline ended before a stage answered'));
  for (let i = stages.length - 1; i >= 0; i--) {
    const stage = stages[i]!;
    const next = run;
    run = (state) => stage.run(state, next);
  }
  return run;
}

/** What an operation declares that some port must serve. */
export interface OperationNeeds {
  /** Endpoint `METHOD /path` or task name, for the error. */
  name: string;
  auth?: AuthMode;
  rateLimits?: readonly RateLimitRule[];
  /** Mutating tasks: idempotency keys are claimed and replayed. */
  idempotent?: boolean;
}

const PROVIDERS: ReadonlyArray<{ stage: StageName; port: Token<unknown>; hint: string; needs(op: OperationNeeds): boolean }> = [
  // `optional` operations serve anonymous callers without one (a credential sent there is refused).
  { stage: 'auth', port: Auth, hint: 'add the auth plugin', needs: (op) => op.auth === 'required' },
  { stage: 'limits', port: RateLimiter, hint: 'add the rate-limit plugin', needs: (op) => !!op.rateLimits?.length },
  { stage: 'idempotency', port: Idempotency, hint: 'add the idempotency plugin', needs: (op) => !!op.idempotent },
];

/**
 * Assembly check: a stage an operation declares (authentication, rate limits, idempotency) must have
 * its port bound, or the deployment does not start (a limit that is silently skipped is no limit).
 */
export function assertStageProviders(operations: Iterable<OperationNeeds>, isBound: (t: Token<unknown>) => boolean): void {
  for (const op of operations) {
    for (const p of PROVIDERS) {
      if (p.needs(op) && !isBound(p.port)) {
        throw new ConfigError(`Operation ${op.name} declares the ${p.stage} stage but no plugin provides port "${p.port.name}" (${p.hint})`);
      }
    }
  }
}

/** Who a rate-limit rule counts: the client address, the caller, or the caller's organization (address when anonymous). */
function subjectOf(rule: RateLimitRule, principal: Principal | null, ip: () => string): string {
  if (rule.per === 'ip') return ip();
  if (rule.per === 'organization') return principal ? `org:${principal.orgId}` : `ip:${ip()}`;
  return principal?.id ?? `ip:${ip()}`;
}

function describeWindow(seconds: number): string {
  if (seconds === 3600) return 'hour';
  if (seconds === 86_400) return 'day';
  if (seconds === 60) return 'minute';
  return `${seconds} s`;
}

/** The limits stage's work: count one hit per rule; the first rule over its limit refuses with RATE_LIMITED. */
export async function enforceRateLimits(
  rules: readonly RateLimitRule[],
  limiter: RateLimiterPort,
  principal: Principal | null,
  ip: () => string,
): Promise<void> {
  for (const rule of rules) {
    const decision = await limiter.consume(`${rule.name}:${subjectOf(rule, principal, ip)}`, rule.limit, rule.windowSeconds);
    if (!decision.allowed) {
      throw new ProtocolError(
        'RATE_LIMITED',
        `Rate limit exceeded: ${rule.limit} per ${describeWindow(rule.windowSeconds)}${rule.per === 'organization' ? ' per organization' : ''}`,
        { retryAfter: decision.retryAfter },
      );
    }
  }
}
