import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { IdempotencyBegin, IdempotencyClaim, IdempotencyPort } from '../../core/ports/idempotency.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import { sql } from '../../core/sql.ts';
import type { ManualClock } from '../../core/ports/clock.ts';
import type { Json } from '../../core/task.ts';

export interface IdempotencySubject {
  port: IdempotencyPort;
  /** The deployment's Clock. */
  clock: ManualClock;
  /** The deployment's database (caller transactions). */
  db: DatabasePort;
  /** How long an in-flight claim holds before another caller may take it over. */
  leaseSeconds: number;
  close(): Promise<void>;
}

let n = 0;
/** A fresh, valid idempotency key. */
const newKey = () => `contract-key-${process.pid}-${Date.now()}-${n++}`;
const H1 = 'a'.repeat(64);
const H2 = 'b'.repeat(64);

async function code(work: Promise<unknown>): Promise<string> {
  const error = await work.then(
    () => null,
    (e) => e,
  );
  expect(error).not.toBeNull();
  return error.code;
}

function claimOf(begin: IdempotencyBegin): IdempotencyClaim {
  expect(begin.kind).toBe('claimed');
  if (begin.kind !== 'claimed') throw new Error('not claimed');
  return begin.claim;
}

/**
 * The idempotency port contract (core/ports/idempotency.ts). The implementation is configured so
 * that a duplicate of an in-flight request does not wait (IDEMPOTENCY_IN_FLIGHT at once).
 */
export function idempotencyContract(name: string, make: () => Promise<IdempotencySubject>): void {
  describe(`idempotency contract: ${name}`, () => {
    let s: IdempotencySubject;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(async () => {
      await s?.close();
    });
    const begin = (principal: string, key: string, hash = H1, task = 'activate_signal') => s.port.begin(principal, key, task, hash);

    test('the first caller claims the key, scoped to its principal, with a fencing claim id', async () => {
      const key = newKey();
      const claim = claimOf(await begin('p1', key));
      expect(claim).toMatchObject({ principalId: 'p1', key });
      expect(claim.claimId).toBeString();
      expect(claim.claimId.length).toBeGreaterThan(0);
    });

    test('after complete, the same key and payload replay the stored response', async () => {
      const key = newKey();
      const response: Json = { status: 'completed', nested: { list: [1, 'two', null] } };
      await s.port.complete(claimOf(await begin('p1', key)), response);
      expect(await begin('p1', key)).toEqual({ kind: 'replay', response });
      expect(await begin('p1', key)).toEqual({ kind: 'replay', response });
    });

    test('the same key with another payload, or for another task, is IDEMPOTENCY_CONFLICT (before and after completion)', async () => {
      const key = newKey();
      const claim = claimOf(await begin('p1', key));
      expect(await code(begin('p1', key, H2))).toBe('IDEMPOTENCY_CONFLICT');
      await s.port.complete(claim, { ok: true });
      expect(await code(begin('p1', key, H2))).toBe('IDEMPOTENCY_CONFLICT');
      expect(await code(begin('p1', key, H1, 'other_task'))).toBe('IDEMPOTENCY_CONFLICT');
      expect((await begin('p1', key)).kind).toBe('replay');
    });

    test('keys are principal-scoped: another principal with the same key claims its own record', async () => {
      const key = newKey();
      await s.port.complete(claimOf(await begin('p1', key)), { who: 'p1' });
      const other = claimOf(await begin('p2', key, H2));
      await s.port.complete(other, { who: 'p2' });
      expect(await begin('p1', key)).toEqual({ kind: 'replay', response: { who: 'p1' } });
      expect(await begin('p2', key, H2)).toEqual({ kind: 'replay', response: { who: 'p2' } });
    });

    test('a duplicate of an in-flight request is IDEMPOTENCY_IN_FLIGHT; of many concurrent callers exactly one claims', async () => {
      const key = newKey();
      const results = await Promise.allSettled(Array.from({ length: 12 }, () => begin('p1', key)));
      const claimed = results.filter((r) => r.status === 'fulfilled' && r.value.kind === 'claimed');
      expect(claimed).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason.code).toBe('IDEMPOTENCY_IN_FLIGHT');
      expect(await code(begin('p1', key))).toBe('IDEMPOTENCY_IN_FLIGHT');
    });

    test(`replays until replayTtlSeconds have passed since the first use; from then on IDEMPOTENCY_EXPIRED`, async () => {
      const key = newKey();
      await s.port.complete(claimOf(await begin('p1', key)), { ok: 1 });
      s.clock.advance(s.port.replayTtlSeconds * 1000 - 1000);
      expect((await begin('p1', key)).kind).toBe('replay');
      s.clock.advance(1000);
      expect(await code(begin('p1', key))).toBe('IDEMPOTENCY_EXPIRED');
      // Another principal's use of the key is its own, unexpired record.
      expect((await begin('p2', key)).kind).toBe('claimed');
    });

    test('release forgets a failed execution: a retry claims again; a completed record is not released', async () => {
      const key = newKey();
      const first = claimOf(await begin('p1', key));
      await s.port.release(first);
      const retry = claimOf(await begin('p1', key));
      expect(retry.claimId).not.toBe(first.claimId);
      await s.port.complete(retry, { ok: 'retry' });
      await s.port.release(retry);
      expect(await begin('p1', key)).toEqual({ kind: 'replay', response: { ok: 'retry' } });
    });

    test('an abandoned claim is taken over after its lease; the old claim is fenced off', async () => {
      const key = newKey();
      const stale = claimOf(await begin('p1', key));
      s.clock.advance(s.leaseSeconds * 1000 - 1000);
      expect(await code(begin('p1', key))).toBe('IDEMPOTENCY_IN_FLIGHT');
      s.clock.advance(2000);
      const current = claimOf(await begin('p1', key));
      expect(current.claimId).not.toBe(stale.claimId);
      // The vanished executor comes back: neither its release nor its complete takes effect.
      await s.port.release(stale);
      await s.port.complete(stale, { from: 'stale' });
      expect(await code(begin('p1', key))).toBe('IDEMPOTENCY_IN_FLIGHT');
      await s.port.complete(current, { from: 'current' });
      expect(await begin('p1', key)).toEqual({ kind: 'replay', response: { from: 'current' } });
    });

    test('complete with a caller transaction commits with it: rolled back, nothing is stored; committed, it replays', async () => {
      const key = newKey();
      const claim = claimOf(await begin('p1', key));
      const boom = new Error('task record failed');
      await expect(
        s.db.transaction(async (tx) => {
          await s.port.complete(claim, { stored: false }, tx);
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await code(begin('p1', key))).toBe('IDEMPOTENCY_IN_FLIGHT');
      await s.db.transaction((tx) => s.port.complete(claim, { stored: true }, tx));
      expect(await begin('p1', key)).toEqual({ kind: 'replay', response: { stored: true } });
    });

    // ---- record and lookup: transactional tasks write the key last, in their own transaction.

    const recordIn = (tx: Queryable, principal: string, key: string, response: Json, hash = H1, task = 'activate_signal') =>
      s.port.record(tx, principal, key, task, hash, response);
    const lookup = (principal: string, key: string, hash = H1, task = 'activate_signal') => s.port.lookup(principal, key, task, hash);

    test('record inside a transaction: committed, the key replays; rolled back, the key is free again', async () => {
      const key = newKey();
      const boom = new Error('a write after the record failed');
      await expect(
        s.db.transaction(async (tx) => {
          expect(await recordIn(tx, 'p1', key, { stored: false })).toEqual({ kind: 'recorded' });
          throw boom;
        }),
      ).rejects.toBe(boom);
      // Nothing survived the rollback: the key is unused, and the next call records it.
      expect(await lookup('p1', key)).toEqual({ kind: 'none' });
      expect(await s.db.transaction((tx) => recordIn(tx, 'p1', key, { stored: true }))).toEqual({ kind: 'recorded' });
      expect(await lookup('p1', key)).toEqual({ kind: 'replay', response: { stored: true } });
      expect(await begin('p1', key)).toEqual({ kind: 'replay', response: { stored: true } });
      // Recording a completed key again finds the first response (the caller rolls back and replays it).
      expect(await s.db.transaction((tx) => recordIn(tx, 'p1', key, { stored: 'again' }))).toEqual({ kind: 'replay', response: { stored: true } });
      // Principal-scoped, like begin.
      expect(await lookup('p2', key)).toEqual({ kind: 'none' });
    });

    test('record and lookup raise IDEMPOTENCY_CONFLICT and IDEMPOTENCY_EXPIRED as begin does', async () => {
      const key = newKey();
      await s.port.complete(claimOf(await begin('p1', key)), { ok: 1 });
      expect(await code(s.db.transaction((tx) => recordIn(tx, 'p1', key, {}, H2)))).toBe('IDEMPOTENCY_CONFLICT');
      expect(await code(s.db.transaction((tx) => recordIn(tx, 'p1', key, {}, H1, 'other_task')))).toBe('IDEMPOTENCY_CONFLICT');
      expect(await code(lookup('p1', key, H2))).toBe('IDEMPOTENCY_CONFLICT');
      expect(await code(lookup('p1', key, H1, 'other_task'))).toBe('IDEMPOTENCY_CONFLICT');
      s.clock.advance(s.port.replayTtlSeconds * 1000);
      expect(await code(s.db.transaction((tx) => recordIn(tx, 'p1', key, {})))).toBe('IDEMPOTENCY_EXPIRED');
      expect(await code(lookup('p1', key))).toBe('IDEMPOTENCY_EXPIRED');
    });

    test('a key with a committed in-flight claim is busy for record and lookup; once completed, both replay it', async () => {
      const key = newKey();
      const held = claimOf(await begin('p1', key));
      expect(await s.db.transaction((tx) => recordIn(tx, 'p1', key, { from: 'record' }))).toEqual({ kind: 'busy' });
      expect(await lookup('p1', key)).toEqual({ kind: 'busy' });
      await s.port.complete(held, { from: 'claim' });
      expect(await lookup('p1', key)).toEqual({ kind: 'replay', response: { from: 'claim' } });
      expect(await s.db.transaction((tx) => recordIn(tx, 'p1', key, { from: 'record' }))).toEqual({ kind: 'replay', response: { from: 'claim' } });
    });

    test('recordAtCommit: recorded with the COMMIT; a taken key fails the transaction and resolves false, lookup tells what it holds', async () => {
      const atCommit = (tx: Queryable, key: string, response: Json, hash = H1) => s.port.recordAtCommit!(tx, 'p1', key, 'activate_signal', hash, response);
      const key = newKey();
      let first!: Promise<boolean>;
      await s.db.transaction(async (tx) => {
        first = atCommit(tx, key, { first: true });
      });
      expect(await first).toBe(true);
      expect(await lookup('p1', key)).toEqual({ kind: 'replay', response: { first: true } });
      await s.db.query(sql`CREATE TABLE IF NOT EXISTS idem_at_commit (id text PRIMARY KEY)`);
      let second!: Promise<boolean>;
      const failed = s.db.transaction(async (tx) => {
        await tx.query(sql`INSERT INTO idem_at_commit VALUES (${key})`);
        second = atCommit(tx, key, { second: true }, H2);
      });
      await expect(failed).rejects.toThrow();
      expect(await second).toBe(false);
      // Nothing of the call's transaction was committed; the key still holds the first response.
      expect(await s.db.query(sql`SELECT id FROM idem_at_commit WHERE id = ${key}`)).toEqual([]);
      expect(await lookup('p1', key)).toEqual({ kind: 'replay', response: { first: true } });
    });

    for (const ending of ['commits', 'rolls back'] as const) {
      test(`a duplicate record waits for the first transaction on the key: when it ${ending}, the duplicate ${ending === 'commits' ? 'replays it' : 'records'}`, async () => {
        const key = newKey();
        let open!: () => void;
        const gate = new Promise<void>((resolve) => (open = resolve));
        let recorded!: () => void;
        const firstRecorded = new Promise<void>((resolve) => (recorded = resolve));
        const first = s.db
          .transaction(async (tx) => {
            expect(await recordIn(tx, 'p1', key, { first: true })).toEqual({ kind: 'recorded' });
            recorded();
            await gate;
            if (ending === 'rolls back') throw new Error('first caller failed');
          })
          .catch(() => {});
        await firstRecorded;
        const second = s.db.transaction((tx) => recordIn(tx, 'p1', key, { second: true }));
        // Postgres: the duplicate is blocked on the key (PGlite, one connection, runs transactions one after another).
        if (s.db.kind === 'postgres') await waitingOnLock(s.db);
        open();
        const found = await second;
        await first;
        if (ending === 'commits') expect(found).toEqual({ kind: 'replay', response: { first: true } });
        else {
          expect(found).toEqual({ kind: 'recorded' });
          expect(await lookup('p1', key)).toEqual({ kind: 'replay', response: { second: true } });
        }
      });
    }
  });
}

/** Until some session of this database waits on a lock (the duplicate's INSERT on the claimed key). */
async function waitingOnLock(db: DatabasePort): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const [row] = await db.query<{ n: number }>(sql`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO idempotency_keys%'`);
    if (row!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the duplicate claim never waited on the key');
}
