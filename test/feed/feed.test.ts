import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { sql } from '../../core/sql.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { ManualClock, Clock } from '../../core/ports/clock.ts';
import { defaultIds } from '../../core/ports/ids.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { FeedEvent, NewEvent } from '../../core/ports/events.ts';
import { createEventLog, sequenceEvents } from '../../plugins/registry-feed/event-log.ts';
import { readFeed, pruneEvents } from '../../plugins/registry-feed/read.ts';
import { nextEventId, successor } from '../../plugins/registry-feed/event-id.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import auth from '../../plugins/auth/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase, openDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';

const migrations = loadMigrations(join(import.meta.dir, '../../plugins/registry-feed/migrations'));
const TOKEN = 'feed-test-token-0123456789';

function event(type: string, n: number, extra: Record<string, unknown> = {}): NewEvent {
  return { event_type: type, entity_type: type.split('.')[0]!, entity_id: defaultIds.uuid7(), payload: { n, ...extra }, actor: 'test' };
}

test('event ids: successor counts up inside one millisecond and keeps the v7 layout', () => {
  const a = '01900000-0000-7000-8000-000000000000';
  const b = successor(a);
  expect(b > a).toBe(true);
  expect(b).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const top = '01900000-0000-7fff-bfff-ffffffffffff';
  expect(successor(top) > top).toBe(true);
  expect(successor(top).startsWith('01900000-0001-7000-8000')).toBe(true);
  expect(nextEventId('ffffffff-0000-7000-8000-000000000000', defaultIds.uuid7()) > 'ffffffff-0000-7000-8000-000000000000').toBe(true);
});

forEachDatabase(
  'change feed',
  async (adapter, schema) => {
    const db = await openDatabase(adapter, schema, 24);
    await db.migrate('registry-feed', migrations);
    return { db, adapter };
  },
  async ({ db }) => db.close(),
  (get, adapter) => {
    const db = (): DatabasePort => get().db;
    const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
    const log = createEventLog(clock);

    async function drain(cursor?: string, limit = 1000): Promise<FeedEvent[]> {
      await sequenceEvents(db(), defaultIds);
      const out: FeedEvent[] = [];
      for (;;) {
        const page = await readFeed(db(), { cursor, limit }, clock.now());
        out.push(...page.events);
        cursor = page.cursor ?? undefined;
        if (!page.has_more) return out;
      }
    }

    test('type globs, exact types and literal underscores', async () => {
      await db().query(sql`DELETE FROM registry_events`);
      await db().transaction((tx) =>
        log.append(tx, [
          event('property.created', 1),
          event('property.stale', 2),
          event('agent.discovered', 3),
          event('agent.profile_updated', 4),
          event('agentxprofile.updated', 5),
        ]),
      );
      await sequenceEvents(db(), defaultIds);
      const types = async (t: string[]) => (await readFeed(db(), { types: t, limit: 100 }, clock.now())).events.map((e) => e.payload.n);
      expect(await types(['property.*'])).toEqual([1, 2]);
      expect(await types(['agent.discovered', 'property.stale'])).toEqual([2, 3]);
      expect(await types(['agent.profile_*'])).toEqual([4]);
      expect(await types(['agent*'])).toEqual([3, 4, 5]);
      expect(await types(['collection.*'])).toEqual([]);
    });

    test('paging: cursor, has_more, cursor echo on an empty page, freshness block', async () => {
      await db().query(sql`DELETE FROM registry_events`);
      await db().transaction((tx) =>
        log.append(
          tx,
          Array.from({ length: 5 }, (_, i) => event('property.updated', i)),
        ),
      );
      await sequenceEvents(db(), defaultIds);
      const p1 = await readFeed(db(), { limit: 2 }, clock.now());
      expect(p1.events.map((e) => e.payload.n)).toEqual([0, 1]);
      expect(p1.has_more).toBe(true);
      const p2 = await readFeed(db(), { cursor: p1.cursor!, limit: 3 }, clock.now());
      expect(p2.events.map((e) => e.payload.n)).toEqual([2, 3, 4]);
      expect(p2.has_more).toBe(false);
      const p3 = await readFeed(db(), { cursor: p2.cursor!, limit: 3 }, clock.now());
      expect(p3.events).toEqual([]);
      expect(p3.cursor).toBe(p2.cursor);
      expect(p3.freshness).toEqual({
        generated_at: clock.now().toISOString(),
        latest_event_created_at: clock.now().toISOString(),
        lag_seconds: 0,
        retention_days: 90,
      });
    });

    test('410 for an unknown cursor and for one older than 90 days', async () => {
      await db().query(sql`DELETE FROM registry_events`);
      await db().transaction((tx) => log.append(tx, event('property.created', 1)));
      const [first] = await drain();
      const unknown = defaultIds.uuid7();
      await expect(readFeed(db(), { cursor: unknown, limit: 10 }, clock.now())).rejects.toMatchObject({ code: 'CURSOR_EXPIRED', status: 410 });
      const later = new Date(clock.now().getTime() + 91 * 86_400_000);
      await expect(readFeed(db(), { cursor: first!.event_id, limit: 10 }, later)).rejects.toMatchObject({ code: 'CURSOR_EXPIRED', status: 410 });
      const sooner = new Date(clock.now().getTime() + 89 * 86_400_000);
      expect((await readFeed(db(), { cursor: first!.event_id, limit: 10 }, sooner)).events).toEqual([]);
    });

    test('retention deletes events older than 90 days, in batches, and keeps the rest', async () => {
      await db().query(sql`DELETE FROM registry_events`);
      const oldClock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
      await db().transaction((tx) =>
        createEventLog(oldClock).append(
          tx,
          Array.from({ length: 10 }, (_, i) => event('property.updated', i)),
        ),
      );
      await db().transaction((tx) =>
        log.append(
          tx,
          Array.from({ length: 4 }, (_, i) => event('property.updated', 100 + i)),
        ),
      );
      await sequenceEvents(db(), defaultIds);
      const deleted = await pruneEvents(db(), clock.now(), { batch: 3 });
      expect(deleted).toBe(10);
      const left = await drain();
      expect(left.map((e) => e.payload.n)).toEqual([100, 101, 102, 103]);
      expect(await pruneEvents(db(), clock.now(), { batch: 3 })).toBe(0);
    });

    test(`gap test: 8 concurrent writers, 10,000 events, a reader paging with small limits sees each once, in order${adapter === 'pglite' ? ' (PGlite has one connection: transactions interleave but never overlap)' : ''}`, async () => {
      await db().query(sql`DELETE FROM registry_events`);
      const WRITERS = 8;
      const TX_PER_WRITER = 125;
      const EVENTS_PER_TX = 10;
      const total = WRITERS * TX_PER_WRITER * EVENTS_PER_TX;
      let writing = true;
      const writers = Array.from({ length: WRITERS }, async (_, w) => {
        for (let t = 0; t < TX_PER_WRITER; t++) {
          await db().transaction(async (tx) => {
            await log.append(
              tx,
              Array.from({ length: EVENTS_PER_TX }, (_, i) => event('property.updated', t * EVENTS_PER_TX + i, { w })),
            );
            // Hold some transactions open so commits land out of staging order (Postgres only; PGlite would just stall).
            if (adapter === 'postgres' && (t + w) % 3 === 0) await Bun.sleep((t * 7 + w * 3) % 5);
          });
          // Writers also run the sequencer now and then, as the periodic job of other instances would.
          if (t % 10 === w % 10) await sequenceEvents(db(), defaultIds);
        }
      });
      const seen: FeedEvent[] = [];
      let cursor: string | undefined;
      const limits = [1, 3, 7, 13];
      let page = 0;
      const reader = (async () => {
        for (;;) {
          const done = !writing;
          await sequenceEvents(db(), defaultIds);
          const result = await readFeed(db(), { cursor, limit: limits[page++ % limits.length]! }, clock.now());
          seen.push(...result.events);
          cursor = result.cursor ?? undefined;
          if (done && !result.has_more) return;
          if (!result.has_more) await Bun.sleep(1);
        }
      })();
      await Promise.all(writers);
      writing = false;
      await reader;
      expect(seen.length).toBe(total);
      const ids = seen.map((e) => e.event_id);
      expect(new Set(ids).size).toBe(total);
      for (let i = 1; i < ids.length; i++) if (!(ids[i]! > ids[i - 1]!)) throw new Error(`event ids out of order at ${i}`);
      const entities = new Set(seen.map((e) => e.entity_id));
      expect(entities.size).toBe(total);
      // Each writer's events arrive in the order it wrote them.
      const lastN = new Map<number, number>();
      for (const e of seen) {
        const w = e.payload.w as number;
        const n = e.payload.n as number;
        expect(n).toBeGreaterThan(lastN.get(w) ?? -1);
        lastN.set(w, n);
      }
      expect(page).toBeGreaterThan(total / 13);
    }, 120_000);
  },
);

forEachDatabase(
  'feed endpoint',
  async (adapter, schema) => {
    const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
    const server = await startServer(
      adapter,
      schema,
      [auth({ testTokens: [{ token: TOKEN, name: 'feed' }] }), registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }), restHost()],
      {
        overrides: [[Clock, clock]],
      },
    );
    return { server, clock };
  },
  async ({ server }) => server.close(),
  (get) => {
    const s = (): TestServer => get().server;
    const feed = (qs = '', token: string | null = TOKEN) => s().fetch(`/api/registry/feed${qs}`, { token: token ?? undefined });

    test('auth required', async () => {
      expect((await feed('', null)).status).toBe(401);
    });

    test('limit bounds, bad types, bad cursor -> 400; default limit 100', async () => {
      for (const qs of ['?limit=0', '?limit=10001', '?limit=abc', '?types=Property.*', '?types=*', '?types=property.*x', '?cursor=not-a-uuid']) {
        const res = await feed(qs);
        expect(res.status, qs).toBe(400);
      }
      const { EventLog } = await import('../../core/ports/events.ts');
      const { Database } = await import('../../core/ports/database.ts');
      const log = s().deployment.get(EventLog);
      await s()
        .deployment.get(Database)
        .transaction((tx) =>
          log.append(
            tx,
            Array.from({ length: 150 }, (_, i) => event('property.created', i)),
          ),
        );
      const body = (await (await feed()).json()) as any;
      expect(body.events).toHaveLength(100);
      expect(body.has_more).toBe(true);
      expect(body.freshness.retention_days).toBe(90);
      const max = (await (await feed('?limit=10000')).json()) as any;
      expect(max.events).toHaveLength(150);
      expect(max.has_more).toBe(false);
      const globbed = (await (await feed('?types=agent.*,property.created&limit=1')).json()) as any;
      expect(globbed.events[0].event_type).toBe('property.created');
    });

    test('410 cursor_expired body for an unknown cursor', async () => {
      const res = await feed(`?cursor=${defaultIds.uuid7()}`);
      expect(res.status).toBe(410);
      const body = (await res.json()) as any;
      expect(body.error).toBe('cursor_expired');
      expect(typeof body.message).toBe('string');
    });
  },
);
