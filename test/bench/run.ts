#!/usr/bin/env bun
/**
 * `bun run bench [--json]`: the table of every task the agents serve, each beside its baseline
 * (table.bench.ts). `bun run bench scaling` grows the catalogs and the registry (scaling.bench.ts);
 * `bun run bench <name...>` runs the other `test/bench/<name>*.bench.ts` (brands-resolve, feed,
 * registry-mcp, webhook-signing, ranking-quality). Each runs in its own process, one after
 * another, so one benchmark's heap and servers cannot skew the next.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = import.meta.dir;
const args = process.argv.slice(2);
const flags = args.filter((a) => a.startsWith('--'));
const wanted = args.filter((a) => !a.startsWith('--'));
const files =
  wanted.length === 0
    ? ['table.bench.ts']
    : readdirSync(dir)
        .filter((f) => f.endsWith('.bench.ts') && wanted.some((w) => f.startsWith(w)))
        .sort();
if (files.length === 0) {
  console.error(`no benchmark named ${wanted.join(', ')} in ${dir}`);
  process.exit(1);
}

let failed = 0;
for (const file of files) {
  if (files.length > 1) console.error(`\n=== ${file} ===`);
  const proc = Bun.spawn(['bun', join(dir, file), ...flags], { stdout: 'inherit', stderr: 'inherit', env: { LOG_LEVEL: 'silent', ...process.env } });
  if ((await proc.exited) !== 0) failed++;
}
if (failed) {
  console.error(`${failed} benchmark(s) failed`);
  process.exit(1);
}
