import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { isUniqueViolation, type DatabasePort, type Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { IdempotencyBegin, IdempotencyClaim, IdempotencyFound, IdempotencyPort } from '../../core/ports/idempotency.ts';
import type { Json } from '../../core/task.ts';
import { jsonOnce } from '../../lib/prebuilt-json.ts';

export interface IdempotencyOptions {
  replayTtlSeconds: number;
  /** How long a duplicate of an in-flight request waits for the first one's response. */
  inFlightWaitMs: number;
  /** An in-flight claim is considered abandoned after this long. */
  inFlightLeaseSeconds: number;
  /** Poll interval while waiting. */
  pollMs: number;
}

interface KeyRow {
  task_name: string;
  payload_hash: string;
  state: 'in_flight' | 'completed';
  claim_id: string;
  response: Json | null;
  claimed_until: string | Date;
  expires_at: string | Date;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Database-backed idempotency (see IdempotencyPort for the contract). */
export class DbIdempotency implements IdempotencyPort {
  readonly replayTtlSeconds: number;

  constructor(
    private readonly db: DatabasePort,
    private readonly clock: ClockPort,
    private readonly ids: IdsPort,
    private readonly options: IdempotencyOptions,
  ) {
    this.replayTtlSeconds = options.replayTtlSeconds;
  }

  async begin(principalId: string, key: string, taskName: string, payloadHash: string): Promise<IdempotencyBegin> {
    // The wait is counted in polls, not read from a clock, so a test's ManualClock cannot stall it.
    for (let waited = 0; ; waited += this.options.pollMs) {
      const found = await this.attempt(principalId, key, taskName, payloadHash);
      if (found.kind !== 'busy') return found;
      if (waited >= this.options.inFlightWaitMs) {
        throw new ProtocolError('IDEMPOTENCY_IN_FLIGHT', 'A request with this idempotency_key is still being processed', {
          retryAfter: 1,
          recovery: 'transient',
          suggestion: 'Retry the same request shortly to receive its response',
        });
      }
      await sleep(this.options.pollMs);
    }
  }

  async record(
    tx: Queryable,
    principalId: string,
    key: string,
    taskName: string,
    payloadHash: string,
    response: Json,
  ): Promise<{ kind: 'recorded' } | IdempotencyFound> {
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + this.replayTtlSeconds * 1000);
    // Inside a transaction the INSERT waits on a concurrent uncommitted record of the key, so by the
    // time it returns, the other caller has committed (its record is found) or rolled back (ours is in).
    const inserted = await tx.query(sql`
      INSERT INTO idempotency_keys (principal_id, key, task_name, payload_hash, state, claim_id, response, created_at, claimed_until, expires_at)
      VALUES (${principalId}::text, ${key}::text, ${taskName}::text, ${payloadHash}::text, 'completed', ${this.ids.uuid7()}::uuid,
              ${jsonOnce(response)}::text::jsonb, ${now}::timestamptz, ${now}::timestamptz, ${expiresAt}::timestamptz)
      ON CONFLICT (principal_id, key) DO NOTHING
      RETURNING 1 AS recorded`);
    if (inserted.length) return { kind: 'recorded' };
    const found = await this.found(tx, principalId, key, taskName, payloadHash);
    // Gone again between the two statements (a released claim): the caller retries the whole call.
    return found.kind === 'none' ? { kind: 'busy' } : found;
  }

  recordAtCommit(tx: Queryable, principalId: string, key: string, taskName: string, payloadHash: string, response: Json): Promise<boolean> {
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + this.replayTtlSeconds * 1000);
    // No ON CONFLICT: an existing key fails the statement, which aborts the transaction, so the
    // COMMIT sent behind it without waiting cannot commit the call's writes. (It waits on a concurrent
    // uncommitted record of the key as `record` does.) The caller asks `lookup` what the key holds.
    return tx
      .query(sql`
      INSERT INTO idempotency_keys (principal_id, key, task_name, payload_hash, state, claim_id, response, created_at, claimed_until, expires_at)
      VALUES (${principalId}::text, ${key}::text, ${taskName}::text, ${payloadHash}::text, 'completed', ${this.ids.uuid7()}::uuid,
              ${jsonOnce(response)}::text::jsonb, ${now}::timestamptz, ${now}::timestamptz, ${expiresAt}::timestamptz)`)
      .then(
        () => true,
        (error: unknown) => {
          if (isUniqueViolation(error)) return false;
          throw error;
        },
      );
  }

  lookup(principalId: string, key: string, taskName: string, payloadHash: string): Promise<{ kind: 'none' } | IdempotencyFound> {
    return this.found(this.db, principalId, key, taskName, payloadHash);
  }

  /** One claim attempt: claimed, replay, busy (someone else's live claim), or an error. */
  private async attempt(principalId: string, key: string, taskName: string, payloadHash: string): Promise<IdempotencyBegin | { kind: 'busy' }> {
    for (;;) {
      const now = this.clock.now();
      const claimId = this.ids.uuid7();
      const claimedUntil = new Date(now.getTime() + this.options.inFlightLeaseSeconds * 1000);
      const expiresAt = new Date(now.getTime() + this.replayTtlSeconds * 1000);
      const inserted = await this.db.query<{ claim_id: string }>(sql`
        INSERT INTO idempotency_keys (principal_id, key, task_name, payload_hash, state, claim_id, created_at, claimed_until, expires_at)
        VALUES (${principalId}::text, ${key}::text, ${taskName}::text, ${payloadHash}::text, 'in_flight', ${claimId}::uuid,
                ${now}::timestamptz, ${claimedUntil}::timestamptz, ${expiresAt}::timestamptz)
        ON CONFLICT (principal_id, key) DO NOTHING
        RETURNING claim_id::text`);
      if (inserted.length) return { kind: 'claimed', claim: { principalId, key, claimId } };

      const row = await this.read(this.db, principalId, key);
      if (!row) continue; // released between our insert and select: try to claim again
      const found = this.verdict(row, taskName, payloadHash, now);
      if (found.kind === 'replay') return found;
      if (new Date(row.claimed_until).getTime() < now.getTime()) {
        // The executing instance vanished: take the claim over (fenced on the old claim id).
        const taken = await this.db.query<{ claim_id: string }>(sql`
          UPDATE idempotency_keys SET claim_id = ${claimId}::uuid, claimed_until = ${claimedUntil}::timestamptz
          WHERE principal_id = ${principalId}::text AND key = ${key}::text AND claim_id = ${row.claim_id}::uuid AND state = 'in_flight'
          RETURNING claim_id::text`);
        if (taken.length) return { kind: 'claimed', claim: { principalId, key, claimId } };
        continue;
      }
      return found;
    }
  }

  private async read(q: Queryable, principalId: string, key: string): Promise<KeyRow | undefined> {
    const [row] = await q.query<KeyRow>(sql`
      SELECT task_name, payload_hash, state, claim_id::text, response, claimed_until, expires_at
      FROM idempotency_keys WHERE principal_id = ${principalId}::text AND key = ${key}::text`);
    return row;
  }

  private async found(q: Queryable, principalId: string, key: string, taskName: string, payloadHash: string): Promise<{ kind: 'none' } | IdempotencyFound> {
    const row = await this.read(q, principalId, key);
    return row ? this.verdict(row, taskName, payloadHash, this.clock.now()) : { kind: 'none' };
  }

  /** What an existing key means for a caller with this task and payload: replay or busy, or EXPIRED/CONFLICT. */
  private verdict(row: KeyRow, taskName: string, payloadHash: string, now: Date): IdempotencyFound {
    if (new Date(row.expires_at).getTime() <= now.getTime()) {
      throw new ProtocolError('IDEMPOTENCY_EXPIRED', `idempotency_key was first used more than ${this.replayTtlSeconds} s ago; its replay window has passed`, {
        suggestion: 'Use a new idempotency_key for a new request',
        recovery: 'correctable',
      });
    }
    if (row.payload_hash !== payloadHash || row.task_name !== taskName) {
      // A conflict carries only code, message and recovery (SUPPLEMENT "Tasks").
      throw new ProtocolError('IDEMPOTENCY_CONFLICT', 'idempotency_key was already used with a different payload', { recovery: 'correctable' });
    }
    if (row.state === 'completed' && row.response) return { kind: 'replay', response: row.response };
    return { kind: 'busy' };
  }

  async complete(claim: IdempotencyClaim, response: Json, tx: Queryable = this.db): Promise<void> {
    await tx.query(sql`
      UPDATE idempotency_keys SET state = 'completed', response = ${jsonOnce(response)}::text::jsonb
      WHERE principal_id = ${claim.principalId}::text AND key = ${claim.key}::text AND claim_id = ${claim.claimId}::uuid`);
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    await this.db.query(sql`
      DELETE FROM idempotency_keys
      WHERE principal_id = ${claim.principalId}::text AND key = ${claim.key}::text AND claim_id = ${claim.claimId}::uuid AND state = 'in_flight'`);
  }

  /** Drop records a full window past expiry (until then a reuse still answers IDEMPOTENCY_EXPIRED). */
  async purge(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - this.replayTtlSeconds * 1000);
    const rows = await this.db.query(sql`DELETE FROM idempotency_keys WHERE expires_at < ${cutoff}::timestamptz RETURNING key`);
    return rows.length;
  }
}
