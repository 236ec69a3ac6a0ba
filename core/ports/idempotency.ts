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

/**
 * What a key already holds when a caller records it at the end of its transaction, or looks it up
 * after a failure: the completed response to replay, or another caller's committed in-flight claim
 * (a non-transactional execution, possibly on another instance: wait for it with `begin`).
 */
export type IdempotencyFound = { kind: 'replay'; response: Json } | { kind: 'busy' };

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
   * Record a completed call's `response` under the key inside the caller's transaction `tx`: one
   * INSERT, as the last write of a call that ran whole in `tx` (transactional tasks claim nothing
   * first). `recorded`: the key is this call's once `tx` commits (a rollback leaves it free). When
   * the key exists, what it holds (a concurrent uncommitted record is waited for): the caller must
   * roll `tx` back and answer that instead. Raises CONFLICT and EXPIRED as `begin` does.
   */
  record(
    tx: Queryable,
    principalId: string,
    key: string,
    taskName: string,
    payloadHash: string,
    response: Json,
  ): Promise<{ kind: 'recorded' } | IdempotencyFound>;
  /**
   * `record` for a call that answers whatever the key holds (replay, wait, or an error) after its
   * transaction failed: the record is issued and not waited for, so the transaction's COMMIT travels
   * with it (see DatabasePort.transaction). When the key exists the statement fails, and with it the
   * transaction; resolves to false then (the caller asks `lookup`), true once recorded.
   */
  recordAtCommit?(tx: Queryable, principalId: string, key: string, taskName: string, payloadHash: string, response: Json): Promise<boolean>;
  /**
   * What the key holds now, claiming nothing (`none` when unused): a transactional call that failed
   * asks whether a duplicate completed meanwhile (its failure may be that duplicate's doing, such as
   * a unique row the duplicate wrote first). Raises CONFLICT and EXPIRED as `begin` does.
   */
  lookup(principalId: string, key: string, taskName: string, payloadHash: string): Promise<{ kind: 'none' } | IdempotencyFound>;
  /** Store the response for replays; with `tx`, it commits with the caller's other writes (a task record). */
  complete(claim: IdempotencyClaim, response: Json, tx?: Queryable): Promise<void>;
  /** Forget a claim whose execution failed, so a retry executes again (no effect once completed). */
  release(claim: IdempotencyClaim): Promise<void>;
}

export const Idempotency = token<IdempotencyPort>('core.idempotency');
