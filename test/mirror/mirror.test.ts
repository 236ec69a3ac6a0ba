import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { assemble, type Deployment } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { Database, type DatabasePort } from '../../core/ports/database.ts';
import { EventLog, type NewEvent } from '../../core/ports/events.ts';
import { defaultIds } from '../../core/ports/ids.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import { sequenceEvents } from '../../plugins/registry-feed/event-log.ts';
import registryMirror, { FeedFollower } from '../../plugins/registry-mirror/index.ts';
import auth from '../../plugins/auth/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase, storagePlugin, uniqueSchema, dropSchema, type AdapterName } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';

const TOKEN = 'mirror-upstream-token-0123456789';
const entities = Array.from({ length: 40 }, () => defaultIds.uuid7());

async function writeEvents(upstream: TestServer, batches: number, perBatch: number, offset: number): Promise<void> {
  const log = upstream.deployment.get(EventLog);
  const db = upstream.deployment.get(Database);
  for (let b = 0; b < batches; b++) {
    const events: NewEvent[] = Array.from({ length: perBatch }, (_, i) => {
      const n = offset + b * perBatch + i;
      return {
        event_type: n % 3 ? 'property.updated' : 'agent.discovered',
        entity_type: n % 3 ? 'property' : 'agent',
        entity_id: entities[n % entities.length]!,
        payload: { n },
        actor: 'test',
      };
    });
    await db.transaction((tx) => log.append(tx, events));
  }
  // Make them visible upstream now (a reader would do the same before reading).
  await sequenceEvents(db, defaultIds);
}

async function mirrorInstance(adapter: AdapterName, schema: string, from: string, follow: boolean): Promise<Deployment> {
  const preset = definePreset({
    name: 'mirror-test',
    plugins: [
      await storagePlugin(adapter, schema),
      auth(),
      registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }),
      registryMirror({ from, key: TOKEN, pageSize: 97, intervalMs: 20, follow }),
    ],
  });
  const deployment = await assemble(preset, { env: { LOG_LEVEL: 'silent' } });
  await deployment.start();
  return deployment;
}

const rows = (db: DatabasePort) =>
  db.query(sql`SELECT event_id::text, event_type, entity_type, entity_id::text, payload, actor, created_at FROM registry_events ORDER BY event_id`);
const state = async (db: DatabasePort) =>
  (
    await db.query<{ cursor: string | null; events_received: string; events_applied: string; bootstraps: number }>(
      sql`SELECT cursor::text, events_received::text, events_applied::text, bootstraps FROM mirror_state`,
    )
  )[0]!;

async function until(check: () => Promise<boolean>): Promise<void> {
  // Polls without asserting on time; the test's own timeout is the bound.
  while (!(await check())) await Bun.sleep(20);
}

forEachDatabase(
  'registry mirror',
  async (adapter, schema) => {
    const upstream = await startServer(adapter, schema, [
      auth({ testTokens: [{ token: TOKEN }] }),
      registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }),
      restHost(),
    ]);
    const mirrorSchema = uniqueSchema('mirror_b');
    return { upstream, adapter, mirrorSchema };
  },
  async ({ upstream, adapter, mirrorSchema }) => {
    await upstream.close();
    await dropSchema(adapter, mirrorSchema);
  },
  (get) => {
    test('a second instance follows the first through a restart and ends with identical data', async () => {
      const { upstream, adapter, mirrorSchema } = get();
      await writeEvents(upstream, 10, 100, 0);
      let mirror = await mirrorInstance(adapter, mirrorSchema, upstream.base, true);
      const mdb = () => mirror.get(Database);
      await until(async () => Number((await state(mdb())).events_received) >= 400);
      // Stop mid-stream (the follower finishes its current page, then stops).
      await mirror.stop();
      const atStop = await state(
        await (async () => {
          mirror = await mirrorInstance(adapter, mirrorSchema, upstream.base, false);
          return mdb();
        })(),
      );
      expect(Number(atStop.events_received)).toBeGreaterThanOrEqual(400);
      expect(atStop.cursor).not.toBeNull();
      await mirror.stop();

      await writeEvents(upstream, 15, 100, 1000);
      mirror = await mirrorInstance(adapter, mirrorSchema, upstream.base, true);
      const upstreamRows = await rows(upstream.deployment.get(Database));
      expect(upstreamRows).toHaveLength(2500);
      const last = (upstreamRows.at(-1) as { event_id: string }).event_id;
      await until(async () => (await state(mdb())).cursor === last);

      expect(await rows(mdb())).toEqual(upstreamRows);
      const s = await state(mdb());
      // Resumed from the stored cursor: every event was received once and applied once.
      expect(Number(s.events_received)).toBe(2500);
      expect(Number(s.events_applied)).toBe(2500);
      // The mirror's latest state of each entity is its last upstream event.
      const expected = await upstream.deployment.get(Database).query(sql`
        SELECT DISTINCT ON (entity_type, entity_id) entity_type, entity_id::text, event_id::text AS last_event_id, payload
        FROM registry_events ORDER BY entity_type, entity_id, event_id DESC`);
      const mirrored = await mdb().query(sql`
        SELECT entity_type, entity_id::text, last_event_id::text, payload FROM mirror_entities ORDER BY entity_type, entity_id`);
      expect(mirrored).toEqual(expected);
      expect(mirrored.length).toBe(80);
      await mirror.stop();
    }, 120_000);

    test('an expired cursor (410) re-bootstraps from the listings and the copy stays identical', async () => {
      const { upstream, adapter, mirrorSchema } = get();
      const mirror = await mirrorInstance(adapter, mirrorSchema, upstream.base, false);
      const mdb = mirror.get(Database);
      await mdb.query(sql`UPDATE mirror_state SET cursor = ${defaultIds.uuid7()}::uuid`);
      await writeEvents(upstream, 1, 50, 2500);
      const follower = new FeedFollower(
        mdb,
        mirror.get(EventLog),
        { from: upstream.base, key: TOKEN, pageSize: 1000, listings: ['/api/registry/publishers', '/health'], timeoutMs: 5000 },
        mirror.logger,
      );
      await follower.catchUp();
      const s = await state(mdb);
      expect(s.bootstraps).toBe(1);
      expect(Number(s.events_applied)).toBe(2550);
      expect(await rows(mdb)).toEqual(await rows(upstream.deployment.get(Database)));
      const snaps = await mdb.query<{ listing: string; status: number }>(sql`SELECT listing, status FROM mirror_snapshots ORDER BY listing`);
      expect(snaps).toEqual([
        { listing: '/api/registry/publishers', status: 404 },
        { listing: '/health', status: 200 },
      ]);
      await mirror.stop();
    }, 60_000);
  },
);
