#!/usr/bin/env bun
/**
 * `bun run bench [name...]`: runs every `test/bench/*.bench.ts` (or the named ones) one after
 * another, each in its own process so one benchmark's heap and server cannot skew the next.
 * Each benchmark prints its own figures next to a baseline it measures in the same run.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = import.meta.dir;
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();

let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file} ===`);
  const proc = Bun.spawn(['bun', join(dir, file)], { stdout: 'inherit', stderr: 'inherit', env: { LOG_LEVEL: 'silent', ...process.env } });
  if ((await proc.exited) !== 0) failed++;
}
if (failed) {
  console.error(`${failed} benchmark(s) failed`);
  process.exit(1);
}
