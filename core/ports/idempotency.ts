import { token } from '../token.ts';
import type { Json } from '../task.ts';
import type { Queryable } from './database.ts';

/** `idempotency_key` syntax (SUPPLEMENT "Tasks"). */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_.:-]{16,255}$/;

export type IdempotencyBegin =
  /** This caller owns the key: execute, then `complete` (or `release` on failure). */
  | { kind: 'claimed'; claim: IdempotencyClaim }
  /** Same key, same payload, finished earlier: answer the stored response with `replayed: true`. */
  | { kind: 'replay'; response: Json };

/** What `claim` finds inside a caller's transaction. */
export type IdempotencyClaimIn =
  | IdempotencyBegin
  /**
   * Another caller holds a committed in-flight claim (a non-transactional execution, possibly on
   * another instance): end the transaction and wait with `begin`.
   */
  | { kind: 'busy' };

export interface IdempotencyClaim {
  principalId: string;
  key: string;
  /** Fencing token: only the claimant's `complete`/`release` take effect. */
  claimId: string;
}

/**
 * Principal-scoped idempotency records in the database (shared by every instance).
 * `begin` claims `(principal, key)` with INSERT ... ON CONFLICT, so exactly one concurrent caller
 * executes; the others wait for its stored response (then replay) or get IDEMPOTENCY_IN_FLIGHT.
 * Raises ProtocolError IDEMPOTENCY_CONFLICT (same key, other payload hash or task name, in flight
 * or completed) and IDEMPOTENCY_EXPIRED (once `replayTtlSeconds` have passed since the key's first
 * use, measured with the Clock port). A claim not completed within the implementation's lease is
 * considered abandoned: the next caller takes it over with a new claim id.
 * Contract: test/contract/idempotency.contract.ts.
 */
export interface IdempotencyPort {
  readonly replayTtlSeconds: number;
  begin(principalId: string, key: string, taskName: string, payloadHash: string): Promise<IdempotencyBegin>;
  /**
   * `begin` inside the caller's transaction `tx`, in as few statements as possible (one when the
   * key is new). The claim is the uncommitted key row itself: a concurrent duplicate blocks on the
   * key until `tx` ends, then replays the committed response (or claims, if `tx` rolled back).
   * Complete it with `complete(claim, response, tx)` in the same transaction; a rollback frees the
   * key, so no `release` is needed. Same errors as `begin`; `busy` instead of waiting.
   */
  claim(tx: Queryable, principalId: string, key: string, taskName: string, payloadHash: string): Promise<IdempotencyClaimIn>;
  /** Store the response for replays; with `tx`, it commits with the caller's other writes (a task record). */
  complete(claim: IdempotencyClaim, response: Json, tx?: Queryable): Promise<void>;
  /** Forget a claim whose execution failed, so a retry executes again (no effect once completed). */
  release(claim: IdempotencyClaim): Promise<void>;
}

export const Idempotency = token<IdempotencyPort>('core.idempotency');
