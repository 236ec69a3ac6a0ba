#!/usr/bin/env bun
/**
 * GET /api/brands/resolve under concurrent load vs a raw Bun.serve constant-JSON baseline,
 * measured in the same run, on embedded PGlite and (when DATABASE_URL is set) Postgres.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { load, row, rssMb, spawnServer } from './harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 64);
const dir = import.meta.dir;

const raw = await spawnServer(join(dir, 'servers/raw.ts'));
const baseline = await load(`http://127.0.0.1:${raw.port}/`, { concurrency, seconds });
await raw.stop();
console.log(`GET /api/brands/resolve, ${concurrency} concurrent connections, ${seconds} s per run (load generator in its own process)`);
console.log(row('raw Bun.serve constant JSON (baseline)', baseline));

const dataDir = mkdtempSync(join(tmpdir(), 'bench-pglite-'));
const targets: Array<[string, Record<string, string>]> = [['registry on PGlite (embedded default)', { DATABASE_URL: '', DATA_DIR: dataDir }]];
let schema: string | undefined;
if (process.env.DATABASE_URL) {
  schema = `bench_${process.pid}`;
  const admin = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await admin.end();
  targets.push(['registry on Postgres', { DATABASE_URL: process.env.DATABASE_URL, DATABASE_SCHEMA: schema }]);
}

for (const [label, env] of targets) {
  const server = await spawnServer(join(dir, 'servers/registry.ts'), [], { ...env, OWNERSHIP_PROOF: 'off', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' });
  const result = await load(`http://127.0.0.1:${server.port}/api/brands/resolve?domain=bench-brand.example`, { concurrency, seconds });
  const rss = await rssMb(server.pid);
  await server.stop();
  console.log(`${row(label, result, baseline)}  rss ${rss} MB`);
}

rmSync(dataDir, { recursive: true, force: true });
if (schema) {
  const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
}
