/**
 * Feed read throughput: pages of 10,000 events through readFeed (the endpoint's query path) and
 * through GET /api/registry/feed (server in a child process), beside a raw SQL select of the same
 * rows. Postgres when DATABASE_URL is set (HTTP part needs it: the child shares the database),
 * else in-memory PGlite.
 *   bun test/bench/feed.bench.ts
 */
import { join } from 'node:path';
import { sql } from '../../core/sql.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { defaultIds } from '../../core/ports/ids.ts';
import { systemClock } from '../../core/ports/clock.ts';
import { assemble } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { serve } from '../../hosts/serve.ts';
import { createEventLog, sequenceEvents } from '../../plugins/registry-feed/event-log.ts';
import { readFeed } from '../../plugins/registry-feed/read.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import auth from '../../plugins/auth/index.ts';
import restHost from '../../hosts/rest/index.ts';
import storagePostgres from '../../plugins/storage-postgres/index.ts';
import { openDatabase, dropSchema, type AdapterName } from '../support/db.ts';

const TOKEN = 'bench-feed-token-0123456789';
const TOTAL = 100_000;
const PAGE = 10_000;
const url = process.env.DATABASE_URL;

if (process.argv[2] === '--serve') {
  // Child: serve the feed on a free port, print it, run until killed.
  const schema = process.argv[3]!;
  const preset = definePreset({
    name: 'bench-feed',
    plugins: [
      storagePostgres({ url: url!, schema, max: 4 }),
      auth({ testTokens: [{ token: TOKEN }] }),
      registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }),
      restHost(),
    ],
  });
  const deployment = await assemble(preset, { env: { LOG_LEVEL: 'silent' } });
  const server = await serve(deployment, { port: 0, hostname: '127.0.0.1' });
  console.log(`PORT ${server.port}`);
  await new Promise(() => {});
}

const adapter: AdapterName = url ? 'postgres' : 'pglite';
const schema = `bench_feed_${process.pid}`;
const db = await openDatabase(adapter, schema, 4);
await db.migrate('registry-feed', loadMigrations(join(import.meta.dir, '../../plugins/registry-feed/migrations')));
const log = createEventLog(systemClock);
const payload = {
  property_rid: defaultIds.uuid7(),
  classification: 'website',
  source: 'adagents_json',
  identifiers: [{ type: 'domain', value: 'example.com' }],
};
for (let i = 0; i < TOTAL; i += 5000) {
  await db.transaction((tx) =>
    log.append(
      tx,
      Array.from({ length: 5000 }, () => ({ event_type: 'property.created', entity_type: 'property', entity_id: defaultIds.uuid7(), payload, actor: 'bench' })),
    ),
  );
}
let started = performance.now();
await sequenceEvents(db, defaultIds, 10_000);
const sequenceMs = performance.now() - started;

async function pages(fetchPage: (cursor: string | null) => Promise<{ count: number; cursor: string | null }>) {
  let cursor: string | null = null;
  let total = 0;
  let n = 0;
  const begin = performance.now();
  for (;;) {
    const page = await fetchPage(cursor);
    if (page.count === 0) break;
    total += page.count;
    n++;
    cursor = page.cursor;
    if (page.count < PAGE) break;
  }
  const ms = performance.now() - begin;
  return { ms, total, pages: n, msPerPage: ms / n, eventsPerSecond: (total / ms) * 1000 };
}

// Warm caches once, then measure.
await readFeed(db, { limit: PAGE }, new Date());
const raw = await pages(async (cursor) => {
  const rows = await db.query<{ event_id: string }>(sql`
    SELECT event_id::text, event_type, entity_type, entity_id::text, payload, actor, created_at
    FROM registry_events ${cursor ? sql`WHERE event_id > ${cursor}::uuid` : sql.empty}
    ORDER BY event_id LIMIT ${PAGE}::int`);
  return { count: rows.length, cursor: rows.at(-1)?.event_id ?? null };
});
const feed = await pages(async (cursor) => {
  const page = await readFeed(db, { cursor: cursor ?? undefined, limit: PAGE }, new Date());
  return { count: page.events.length, cursor: page.cursor };
});

const fmt = (label: string, r: typeof raw, base = raw) =>
  `${label.padEnd(34)} ${r.msPerPage.toFixed(1).padStart(8)} ms/page  ${Math.round(r.eventsPerSecond).toString().padStart(9)} events/s  (${r.pages} pages, ${r.total} events; ${(r.msPerPage / base.msPerPage).toFixed(2)}x raw)`;
console.log(`adapter ${adapter}; ${TOTAL} events; sequencing them took ${sequenceMs.toFixed(0)} ms (${Math.round((TOTAL / sequenceMs) * 1000)} events/s)`);
console.log(fmt('raw SQL select (baseline)', raw));
console.log(fmt('readFeed (endpoint query path)', feed));

if (adapter === 'postgres') {
  const child = Bun.spawn(['bun', import.meta.path, '--serve', schema], { stdout: 'pipe', stderr: 'inherit', env: { ...process.env, LOG_LEVEL: 'silent' } });
  const reader = child.stdout.getReader();
  let out = '';
  while (!/PORT (\d+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error('feed server exited');
    out += new TextDecoder().decode(value);
  }
  const port = /PORT (\d+)/.exec(out)![1];
  const http = async (cursor: string | null) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/registry/feed?limit=${PAGE}${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const body = (await res.json()) as { events: unknown[]; cursor: string | null };
    return { count: body.events.length, cursor: body.cursor };
  };
  await http(null);
  const viaHttp = await pages(http);
  console.log(fmt('GET /api/registry/feed (HTTP, JSON)', viaHttp));
  child.kill();
  await child.exited;
} else {
  console.log('GET /api/registry/feed: skipped (needs DATABASE_URL so a child server process can share the database)');
}
started = performance.now();
await db.close();
await dropSchema(adapter, schema);
process.exit(0);
