#!/usr/bin/env bun
/**
 * Agent inventory search over 100,000 profiles seeded by the demo generator, on Postgres:
 * p50/p95 latency (sequential requests) and requests/s (8 concurrent) for 1-, 3- and
 * 6-dimension queries over HTTP (server in a child process), beside the same SQL run raw through
 * postgres.js in this process. Seeding happens once per schema (kept between runs).
 * PGlite is not measured: seeding 100k profiles into the embedded database works but its
 * single-connection engine is not what a deployment at this size runs on.
 */
import { join } from 'node:path';
import postgres from 'postgres';
import { loadMigrations } from '../../core/migrations.ts';
import { sql } from '../../core/sql.ts';
import { createPostgresDatabase } from '../../plugins/storage-postgres/index.ts';
import { createPostgresSearch, searchConditions } from '../../plugins/search-postgres/index.ts';
import { resetDiscovery, seedDemo } from '../../plugins/registry-agents/demo-seed.ts';
import { createSearchSync } from '../../plugins/registry-agents/search-sync.ts';
import { systemClock } from '../../core/ports/clock.ts';
import { defaultIds } from '../../core/ports/ids.ts';
import { createLogger } from '../../core/log.ts';
import type { AgentSearchQuery } from '../../core/ports/search.ts';

const URL_ = process.env.DATABASE_URL;
if (!URL_) {
  console.log('agent-search: skipped (DATABASE_URL is not set; this benchmark measures Postgres)');
  process.exit(0);
}
const AGENTS = Number(process.env.BENCH_AGENTS ?? 100_000);
const SCHEMA = `bench_agent_search_${AGENTS}`;
const TOKEN = 'bench-token-agent-search-0001';
const root = join(import.meta.dir, '../..');

// ---- Seed (once per schema).
const db = await createPostgresDatabase({ url: URL_, schema: SCHEMA, max: 4 });
await db.migrate('registry-agents', loadMigrations(join(root, 'plugins/registry-agents/migrations')));
await db.migrate('search-postgres', loadMigrations(join(root, 'plugins/search-postgres/migrations')));
const [have] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM search_agent_profiles`);
const search = createPostgresSearch(db);
if (have!.n !== AGENTS) {
  const t = performance.now();
  await resetDiscovery(db);
  const summary = await seedDemo(db, { agents: AGENTS, seed: 7, clock: systemClock, ids: defaultIds });
  const sync = createSearchSync(
    { db, search, clock: systemClock, ids: defaultIds, logger: createLogger('warn') },
    { batch: 5000, retryBaseMs: 1000, retryMaxMs: 60_000 },
  );
  await sync.reindex();
  await db.query(sql`ANALYZE`);
  console.log(`seeded ${SCHEMA} in ${((performance.now() - t) / 1000).toFixed(1)} s`, summary);
} else console.log(`reusing seeded schema ${SCHEMA}`);
const [profiles] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM search_agent_profiles`);
await db.close();

// ---- Server in a child process.
const child = Bun.spawn(['bun', join(import.meta.dir, 'agent-search-server.ts')], {
  env: { ...process.env, BENCH_SCHEMA: SCHEMA, BENCH_TOKEN: TOKEN, LOG_LEVEL: 'silent' },
  stdout: 'pipe',
  stderr: 'inherit',
});
const reader = child.stdout.getReader();
let out = '';
while (!/PORT=\d+/.test(out)) {
  const { value, done } = await reader.read();
  if (done) throw new Error(`server exited: ${out}`);
  out += new TextDecoder().decode(value);
}
const base = `http://127.0.0.1:${/PORT=(\d+)/.exec(out)![1]}`;

const shapes: Array<{ name: string; filters: AgentSearchQuery['filters'] }> = [
  { name: '1-dim', filters: { channels: ['display'] } },
  { name: '3-dim', filters: { channels: ['display', 'olv'], markets: ['US', 'GB'], delivery_types: ['guaranteed'] } },
  {
    name: '6-dim',
    filters: {
      channels: ['display', 'olv', 'ctv'],
      property_types: ['website', 'mobile_app'],
      markets: ['US', 'GB', 'DE'],
      categories: ['IAB1', 'IAB2', 'IAB3'],
      tags: ['premium', 'news'],
      delivery_types: ['guaranteed'],
    },
  },
];

const raw = postgres(URL_, { max: 8, connection: { search_path: `${SCHEMA},public` }, onnotice: () => {} });
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function measure(run: () => Promise<unknown>): Promise<{ p50: number; p95: number; rps: number }> {
  for (let i = 0; i < 20; i++) await run();
  const lat: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    await run();
    lat.push(performance.now() - t);
  }
  let done = 0;
  const until = performance.now() + 3000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < until) {
        await run();
        done++;
      }
    }),
  );
  return { p50: pct(lat, 50), p95: pct(lat, 95), rps: done / ((performance.now() - start) / 1000) };
}

console.log(`\nagent search over ${profiles!.n} profiles (${AGENTS} agents), limit 50, member viewer`);
console.log('query   | HTTP p50 / p95 ms | HTTP req/s | raw SQL p50 / p95 ms | raw SQL q/s | HTTP/SQL p95 | results');
for (const shape of shapes) {
  const qs = Object.entries(shape.filters)
    .map(([k, v]) => `${k}=${v!.join(',')}`)
    .join('&');
  const http = async () => {
    const res = await fetch(`${base}/api/registry/agents/search?${qs}&limit=50`, { headers: { authorization: `Bearer ${TOKEN}` } });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    return res.json();
  };
  const query: AgentSearchQuery = { filters: shape.filters, limit: 50, viewer: { member: true, orgId: '00000000-0000-8000-a000-000000000000' } };
  const { text, values } = sql`
    SELECT agent_url, channels, property_types, markets, categories, tags, delivery_types, format_ids, property_count,
      publisher_count, has_tmp, category_taxonomy, updated_at, base_score
    FROM search_agent_profiles WHERE ${sql.join(searchConditions(query), ' AND ')}
    ORDER BY base_score DESC, agent_url ASC LIMIT ${51}::int`.build();
  const rawRun = () => raw.unsafe(text, values as any[], { prepare: true });
  const results = ((await http()) as any).results.length;
  const h = await measure(http);
  const s = await measure(rawRun);
  console.log(
    `${shape.name.padEnd(7)} | ${h.p50.toFixed(2).padStart(6)} / ${h.p95.toFixed(2).padStart(6)}   | ${h.rps.toFixed(0).padStart(10)} | ${s.p50.toFixed(2).padStart(7)} / ${s.p95.toFixed(2).padStart(6)}      | ${s.rps.toFixed(0).padStart(11)} | ${(h.p95 / s.p95).toFixed(2).padStart(11)}x | ${results}`,
  );
}
await raw.end();
child.kill('SIGTERM');
await child.exited;
