#!/usr/bin/env bun
/**
 * How cost grows with the data, on Postgres (needs DATABASE_URL):
 * - the signal and product catalogs grown to each of BENCH_SIZES items (default 1k, 10k, 100k):
 *   get_signals and get_products over MCP (agents-server.ts, restarted at each size so it loads
 *   the grown catalog as a deployment would), requests/s and p50/p95 from BENCH_CONCURRENCY
 *   clients, the server's CPU time per request (steadier than latency on a shared machine), its
 *   start-up time and RSS after the load;
 * - the registry's search index grown to each of BENCH_AGENTS agents (default 10k, 100k, 1M):
 *   agent search over HTTP (agent-search-server.ts), p50/p95 of sequential requests and
 *   requests/s from 8 clients, for 1-, 3- and 6-dimension queries, beside the raw SQL's p95.
 * Rows are generated in SQL (generate_series over the seed rows, names and descriptions varied
 * with two extra words so the text index grows too). The registry starts from the demo generator's
 * agents (BENCH_AGENT_SEED, indexed through the search sync), then its index table is grown;
 * a schema is kept between runs. BENCH_BEFORE=<checkout> also measures another checkout's agents'
 * server (its test/bench/agents-server.ts) at each catalog size, for before/after figures of one run. Postgres only: PGlite is one embedded connection, not what a
 * deployment with a million agents runs on. `--json` prints the figures as JSON.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { loadMigrations } from '../../core/migrations.ts';
import { sql as fragment } from '../../core/sql.ts';
import { createPostgresDatabase } from '../../plugins/storage-postgres/index.ts';
import { createPostgresSearch, searchConditions } from '../../plugins/search-postgres/index.ts';
import { seedDemo } from '../../plugins/registry-agents/demo-seed.ts';
import { createSearchSync } from '../../plugins/registry-agents/search-sync.ts';
import { systemClock } from '../../core/ports/clock.ts';
import { defaultIds } from '../../core/ports/ids.ts';
import { createLogger } from '../../core/log.ts';
import type { AgentSearchQuery } from '../../core/ports/search.ts';
import { cpuMs } from './harness.ts';

const URL_ = process.env.DATABASE_URL;
if (!URL_) {
  console.log('scaling: skipped (DATABASE_URL is not set; this benchmark measures Postgres)');
  process.exit(0);
}
const JSON_OUT = process.argv.includes('--json');
const log = (line: string) => (JSON_OUT ? console.error(line) : console.log(line));
const sizes = (name: string, fallback: string) => (process.env[name] ?? fallback).split(',').map(Number);
const CATALOG_SIZES = sizes('BENCH_SIZES', '1000,10000,100000');
const AGENT_SIZES = sizes('BENCH_AGENTS', '10000,100000,1000000');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const TOKEN = 'bench-token-0123456789abcdef';
const root = join(import.meta.dir, '../..');
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const pct = (xs: number[], p: number) => Math.round([...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]! * 100) / 100;
const rssMb = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024);
const admin = postgres(URL_, { max: 2, onnotice: () => {} });

async function start(script: string, env: Record<string, string>, dir = import.meta.dir) {
  const t0 = performance.now();
  const proc = Bun.spawn(['bun', join(dir, script)], { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, stdout: 'pipe', stderr: 'inherit' });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!/(READY |PORT=)(\d+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${script} exited: ${out}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { proc, port: Number(/(READY |PORT=)(\d+)/.exec(out)![2]), startMs: Math.round(performance.now() - t0) };
}

/** Grow `table` to `size` rows: the rows not generated stay, copies of them fill the rest (key suffixed `_g<n>`). */
async function grow(schema: string, table: string, key: string, size: number, vary: string[]) {
  const s = admin.unsafe.bind(admin);
  await s(`DELETE FROM "${schema}".${table} WHERE ${key} ~ '_g[0-9]+$'`);
  const n = Number((await s(`SELECT count(*)::int AS n FROM "${schema}".${table}`))[0]!.n);
  const need = size - n;
  if (need <= 0) return n;
  const cols = (
    await s(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`, [schema, table])
  ).map((r) => r.column_name as string);
  const words = `ARRAY['alpine','harbor','urban','rural','premium','budget','family','student','luxury','outdoor','gaming','travel','finance','health','fitness','music','cooking','fashion','beauty','pets','garden','auto','tech','parents','seniors','commuters','weekend','evening','morning','holiday']`;
  const pick = (e: string) => `(${words})[1 + (${e}) % 30]`;
  const select = cols.map((c) =>
    c === key ? `b.${key} || '_g' || g` : vary.includes(c) ? `b.${c} || ' ' || ${pick('g')} || ' ' || ${pick('g / 30 + b.rn')}` : `b.${c}`,
  );
  await s(`INSERT INTO "${schema}".${table} (${cols.join(', ')})
    SELECT ${select.join(', ')} FROM (SELECT *, row_number() OVER (ORDER BY ${key}) AS rn FROM "${schema}".${table}) b
    CROSS JOIN generate_series(1, ceil(${need}::numeric / ${n})::int) g
    LIMIT ${need}`);
  return size;
}

// ---- Catalogs. BENCH_BEFORE=<another checkout>: its agents' server is measured too, right after this one at each size.
const builds: Array<[string, string]> = [['current', import.meta.dir]];
if (process.env.BENCH_BEFORE) builds.push(['before', join(process.env.BENCH_BEFORE, 'test/bench')]);
const catalogSchema = 'bench_scaling_catalogs';
const catalogRows: Array<Record<string, unknown>> = [];
if (CATALOG_SIZES.length && CATALOG_SIZES[0]) {
  log(`catalogs on Postgres: get_signals and get_products over MCP, ${CONCURRENCY} clients, ${SECONDS} s per size`);
  const calls = {
    get_signals: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'get_signals',
        arguments: {
          signal_spec: 'sports fans streaming live games',
          deliver_to: { deployments: [{ type: 'platform', platform: 'the-trade-desk' }], countries: ['US'] },
          max_results: 5,
        },
      },
    }),
    get_products: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'get_products',
        arguments: { buying_mode: 'brief', brief: 'premium sports video on connected TV in the US', pagination: { max_results: 5 } },
      },
    }),
  };
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}` };
  // A first start creates the schema and seeds both catalogs.
  const first = await start('agents-server.ts', { BENCH_STORAGE: 'postgres', BENCH_SCHEMA: catalogSchema });
  first.proc.kill();
  await first.proc.exited;
  for (const size of CATALOG_SIZES) {
    const t0 = performance.now();
    const signals = await grow(catalogSchema, 'signals', 'id', size, ['name', 'description']);
    const products = await grow(catalogSchema, 'inventory_products', 'product_id', size, ['name', 'description']);
    await admin.unsafe(`ANALYZE "${catalogSchema}".signals; ANALYZE "${catalogSchema}".inventory_products`);
    const genS = ((performance.now() - t0) / 1000).toFixed(1);
    for (const [build, dir] of builds) {
      const server = await start('agents-server.ts', { BENCH_STORAGE: 'postgres', BENCH_SCHEMA: catalogSchema }, dir);
      const url = `http://127.0.0.1:${server.port}/mcp`;
      const tag = builds.length > 1 ? ` [${build}]` : '';
      for (const [task, body] of Object.entries(calls)) {
        const once = async () => {
          const res = await fetch(url, { method: 'POST', headers, body });
          const text = await res.text();
          if (res.status !== 200 || text.includes('"isError":true')) throw new Error(`${task}: ${res.status} ${text.slice(0, 300)}`);
        };
        for (let i = 0; i < 30; i++) await once();
        const lat: number[] = [];
        const cpu = cpuMs(server.proc.pid);
        const end = performance.now() + SECONDS * 1000;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (performance.now() < end) {
              const t = performance.now();
              await once();
              lat.push(performance.now() - t);
            }
          }),
        );
        const row = {
          size,
          signals,
          products,
          task,
          build,
          rps: Math.round(lat.length / SECONDS),
          p50_ms: pct(lat, 0.5),
          p95_ms: pct(lat, 0.95),
          cpu_ms_per_request: Math.round(((cpuMs(server.proc.pid) - cpu) / lat.length) * 1000) / 1000,
          load: loadavg(),
        };
        catalogRows.push(row);
        log(
          `  ${String(size).padStart(7)} items  ${task.padEnd(13)}${tag} ${String(row.rps).padStart(6)} req/s  p50 ${row.p50_ms.toFixed(1).padStart(6)} ms  p95 ${row.p95_ms.toFixed(1).padStart(6)} ms  server CPU ${row.cpu_ms_per_request.toFixed(3)} ms/request  (load ${row.load})`,
        );
      }
      const rss = rssMb(server.proc.pid);
      log(`  ${String(size).padStart(7)} items${tag}  server start-up ${server.startMs} ms, RSS after load ${rss} MB, rows generated in ${genS} s`);
      for (const r of catalogRows.filter((r) => r.size === size && r.build === build)) Object.assign(r, { start_ms: server.startMs, rss_mb: rss });
      server.proc.kill();
      await server.proc.exited;
    }
  }
}

// ---- Registry agent search.
const agentRows: Array<Record<string, unknown>> = [];
if (AGENT_SIZES.length && AGENT_SIZES[0]) {
  const SEED = Number(process.env.BENCH_AGENT_SEED ?? 2000);
  const schema = `bench_scaling_agents_${SEED}`;
  const db = await createPostgresDatabase({ url: URL_, schema, max: 4 });
  await db.migrate('registry-agents', loadMigrations(join(root, 'plugins/registry-agents/migrations')));
  await db.migrate('search-postgres', loadMigrations(join(root, 'plugins/search-postgres/migrations')));
  const search = createPostgresSearch(db);
  const [seeded] = await db.query<{ n: number }>(fragment`SELECT count(*)::int AS n FROM registry_agents`);
  if (seeded!.n === 0) {
    await seedDemo(db, { agents: SEED, seed: 7, clock: systemClock, ids: defaultIds });
    const sync = createSearchSync(
      { db, search, clock: systemClock, ids: defaultIds, logger: createLogger('warn') },
      { batch: 5000, retryBaseMs: 1000, retryMaxMs: 60_000 },
    );
    await sync.reindex();
  }
  await db.close();
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
  const raw = postgres(URL_, { max: 8, connection: { search_path: `${schema},public` }, onnotice: () => {} });
  log(`registry agent search on Postgres (from ${SEED} generated agents), limit 50, member viewer; sequential p50/p95, 8 clients for req/s`);
  for (const size of AGENT_SIZES) {
    const t0 = performance.now();
    const n = await grow(schema, 'search_agent_profiles', 'agent_url', size, []);
    await admin.unsafe(`VACUUM ANALYZE "${schema}".search_agent_profiles`);
    const genS = ((performance.now() - t0) / 1000).toFixed(1);
    const server = await start('agent-search-server.ts', { BENCH_SCHEMA: schema, BENCH_TOKEN: TOKEN });
    const base = `http://127.0.0.1:${server.port}`;
    for (const shape of shapes) {
      const qs = Object.entries(shape.filters)
        .map(([k, v]) => `${k}=${v!.join(',')}`)
        .join('&');
      const http = async () => {
        const res = await fetch(`${base}/api/registry/agents/search?${qs}&limit=50`, { headers: { authorization: `Bearer ${TOKEN}` } });
        if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
        return res.json();
      };
      const query: AgentSearchQuery = { filters: shape.filters, limit: 50, viewer: { member: true, orgId: '00000000-0000-8000-a000-000000000000' } };
      const { text, values } = fragment`
        SELECT agent_url, channels, property_types, markets, categories, tags, delivery_types, format_ids, property_count,
          publisher_count, has_tmp, category_taxonomy, updated_at, base_score
        FROM search_agent_profiles WHERE ${fragment.join(searchConditions(query), ' AND ')}
        ORDER BY base_score DESC, agent_url ASC LIMIT ${51}::int`.build();
      // Unprepared, as the server sends it (sql.planEachRun): planned with these values on every run.
      const rawRun = () => raw.unsafe(text, values as any[], { prepare: false });
      const results = ((await http()) as { results: unknown[] }).results.length;
      const sequential = async (run: () => Promise<unknown>) => {
        for (let i = 0; i < 20; i++) await run();
        const lat: number[] = [];
        for (let i = 0; i < 200; i++) {
          const t = performance.now();
          await run();
          lat.push(performance.now() - t);
        }
        return lat;
      };
      const lat = await sequential(http);
      const rawLat = await sequential(rawRun);
      let done = 0;
      const until = performance.now() + 3000;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (performance.now() < until) {
            await http();
            done++;
          }
        }),
      );
      const row = {
        agents: n,
        query: shape.name,
        results,
        rps: Math.round(done / 3),
        p50_ms: pct(lat, 0.5),
        p95_ms: pct(lat, 0.95),
        raw_sql_p95_ms: pct(rawLat, 0.95),
        load: loadavg(),
      };
      agentRows.push(row);
      log(
        `  ${String(n).padStart(8)} agents  ${shape.name}  p50 ${row.p50_ms.toFixed(2).padStart(6)} ms  p95 ${row.p95_ms.toFixed(2).padStart(6)} ms  ${String(row.rps).padStart(5)} req/s  raw SQL p95 ${row.raw_sql_p95_ms.toFixed(2).padStart(6)} ms  ${results} results  (load ${row.load})`,
      );
    }
    log(`  ${String(n).padStart(8)} agents  index rows generated in ${genS} s, server RSS ${rssMb(server.proc.pid)} MB`);
    server.proc.kill();
    await server.proc.exited;
  }
  await raw.end();
}
await admin.end();
if (JSON_OUT)
  console.log(
    JSON.stringify({ cores: navigator.hardwareConcurrency, concurrency: CONCURRENCY, seconds: SECONDS, catalogs: catalogRows, agents: agentRows }, null, 2),
  );
