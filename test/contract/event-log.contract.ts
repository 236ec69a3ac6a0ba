import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { v7 } from 'uuid';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ManualClock } from '../../core/ports/clock.ts';
import type { EventLogPort, FeedEvent, NewEvent } from '../../core/ports/events.ts';

export interface EventLogSubject {
  port: EventLogPort;
  db: DatabasePort;
  clock: ManualClock;
  /** Every committed event after `cursor` (an event id), as the feed's readers get them, in feed order. */
  read(cursor?: string): Promise<FeedEvent[]>;
  close(): Promise<void>;
}

export interface EventLogFeatures {
  /** The database serves a reader while a writer's transaction is open (Postgres; PGlite has one connection). */
  concurrentReaders: boolean;
}

let runs = 0;

/** The event log contract (core/ports/events.ts). */
export function eventLogContract(name: string, make: () => Promise<EventLogSubject>, features: EventLogFeatures): void {
  describe(`event log contract: ${name}`, () => {
    let s: EventLogSubject;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(async () => {
      await s?.close();
    });
    /** Events of one test carry its run id, so tests sharing the log never see each other's. */
    let run = '';
    const event = (type: string, n: number): NewEvent => ({
      event_type: type,
      entity_type: type.split('.')[0]!,
      entity_id: v7(),
      payload: { run, n },
      actor: 'contract',
    });
    const mine = async (cursor?: string) => (await s.read(cursor)).filter((e) => e.payload.run === run);
    const ns = async (cursor?: string) => (await mine(cursor)).map((e) => e.payload.n);
    const fresh = () => (run = `run-${process.pid}-${runs++}`);

    test('appended in a committed transaction: every field kept, Clock time, order of the transaction kept', async () => {
      fresh();
      const events = [event('property.created', 1), event('property.updated', 2), event('agent.discovered', 3)];
      await s.db.transaction((tx) => s.port.append(tx, events));
      const seen = await mine();
      expect(seen.map((e) => e.payload.n)).toEqual([1, 2, 3]);
      seen.forEach((e, i) => {
        expect(e).toEqual({ ...events[i]!, event_id: expect.any(String), created_at: s.clock.now().toISOString() });
      });
      expect(seen[0]!.event_id < seen[1]!.event_id && seen[1]!.event_id < seen[2]!.event_id).toBe(true);
    });

    test('a single event, and an empty list (nothing appended)', async () => {
      fresh();
      await s.db.transaction(async (tx) => {
        await s.port.append(tx, []);
        await s.port.append(tx, event('property.created', 1));
      });
      expect(await ns()).toEqual([1]);
    });

    test('events of a rolled-back transaction never appear', async () => {
      fresh();
      const boom = new Error('roll back');
      await expect(
        s.db.transaction(async (tx) => {
          await s.port.append(tx, [event('property.created', 1), event('property.created', 2)]);
          throw boom;
        }),
      ).rejects.toBe(boom);
      await s.db.transaction((tx) => s.port.append(tx, event('property.created', 3)));
      expect(await ns()).toEqual([3]);
    });

    test('transactions committed one after another appear in commit order', async () => {
      fresh();
      for (let t = 0; t < 5; t++) {
        s.clock.advance(1000);
        await s.db.transaction((tx) => s.port.append(tx, [event('property.updated', t * 2), event('property.updated', t * 2 + 1)]));
      }
      expect(await ns()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    if (features.concurrentReaders) {
      test('a reader never sees an event while its transaction is open; it does once committed', async () => {
        fresh();
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        let appended!: () => void;
        const appendedSignal = new Promise<void>((r) => (appended = r));
        const writer = s.db.transaction(async (tx) => {
          await s.port.append(tx, event('property.created', 1));
          appended();
          await gate;
        });
        await appendedSignal;
        expect(await ns()).toEqual([]);
        release();
        await writer;
        expect(await ns()).toEqual([1]);
      });

      test('a transaction that commits after a reader moved past later events is still delivered (late committer)', async () => {
        fresh();
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        let appended!: () => void;
        const appendedSignal = new Promise<void>((r) => (appended = r));
        // A: appends first, commits last.
        const slow = s.db.transaction(async (tx) => {
          await s.port.append(tx, event('property.created', 1));
          appended();
          await gate;
        });
        await appendedSignal;
        await s.db.transaction((tx) => s.port.append(tx, event('property.created', 2)));
        const seen = await mine();
        expect(seen.map((e) => e.payload.n)).toEqual([2]);
        release();
        await slow;
        const after = await mine(seen[0]!.event_id);
        expect(after.map((e) => e.payload.n)).toEqual([1]);
        expect(after[0]!.event_id > seen[0]!.event_id).toBe(true);
      });
    } else {
      test.skip("skipped: the database has one connection, so no reader runs while a writer's transaction is open (visibility before commit, late committer)", () => {});
    }

    test('replicate stores events with their own ids and times, in the caller transaction, and counts the new ones', async () => {
      fresh();
      const at = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m)).toISOString();
      const copy = (n: number): FeedEvent => ({ ...event('property.created', n), event_id: v7(), created_at: at(n) });
      const [a, b, c] = [copy(1), copy(2), copy(3)];
      await expect(
        s.db.transaction(async (tx) => {
          expect(await s.port.replicate(tx, [a, b])).toBe(2);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await ns()).toEqual([]);
      expect(await s.db.transaction((tx) => s.port.replicate(tx, [a, b]))).toBe(2);
      expect(await s.db.transaction((tx) => s.port.replicate(tx, [a, b]))).toBe(0);
      expect(await s.db.transaction((tx) => s.port.replicate(tx, [b, c, a]))).toBe(1);
      expect(await s.db.transaction((tx) => s.port.replicate(tx, []))).toBe(0);
      expect(await mine()).toEqual([a, b, c]);
    });
  });
}
