#!/usr/bin/env bun
/**
 * `bun run crawl [--concurrency N] [--file domains.txt] [--preset registry] <domain...>`
 * Queues a crawl of each domain as durable jobs (the same ones crawl-request queues), runs them
 * with N local workers (instances already running on the same database help), shows a progress
 * bar, then prints one line per domain. Exit code 1 when any crawl failed.
 */
import { readFileSync } from 'node:fs';
import { assemble } from '../core/deployment.ts';
import type { Preset } from '../core/config.ts';
import { Database } from '../core/ports/database.ts';
import { tryNormalizeDomain } from '../lib/domain.ts';
import { enqueueCrawl, findJobs, runCrawlBatch, workerDeps } from '../plugins/registry-crawl/index.ts';
import { exitOnHelp } from '../lib/cli.ts';

const usage = `usage: bun run crawl [--concurrency N] [--file domains.txt] [--preset registry] <domain...>

Queues a crawl of each domain (adagents.json and brand.json) as durable jobs, runs them with N local workers
(default 4; instances running on the same database help), then prints one line per domain. Exit 1 when any
crawl failed. Logs are off unless LOG_LEVEL is set (the table reports every failure).`;
exitOnHelp(usage);

const args = process.argv.slice(2);
let concurrency = 4;
let presetName = 'registry';
const inputs: string[] = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i]!;
  if (a === '--concurrency' || a === '-c') concurrency = Number(args[++i]);
  else if (a === '--file' || a === '-f') inputs.push(...readFileSync(args[++i]!, 'utf8').split(/\s+/));
  else if (a === '--preset') presetName = args[++i]!;
  else inputs.push(a);
}
if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
  console.error('--concurrency must be an integer from 1 to 64');
  process.exit(2);
}
const domains = [...new Set(inputs.filter(Boolean).map((d) => tryNormalizeDomain(d) ?? `!${d}`))];
const bad = domains.filter((d) => d.startsWith('!'));
if (bad.length) {
  console.error(`not domain names: ${bad.map((d) => d.slice(1)).join(', ')}`);
  process.exit(2);
}
if (!domains.length) {
  console.error(usage);
  process.exit(2);
}

const preset = (await import(`../config/${presetName}.ts`)).default as Preset;
// No log lines between the progress bar and the table (each failure is in the table); LOG_LEVEL turns them on.
const deployment = await assemble(preset, { env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' }, startupWarnings: false });
await deployment.start();
const db = deployment.get(Database);
// Batch crawls retry less patiently than the background pipeline: 2 attempts, 5 s apart.
const base = workerDeps(deployment);
const deps = { ...base, settings: { ...base.settings, maxAttempts: 2, backoffMs: 5000 } };

const jobIds = new Map<string, string>();
for (const domain of domains) jobIds.set(domain, (await enqueueCrawl(db, deps, { domain, reason: 'cli' })).id);
const ids = [...jobIds.values()];

const tty = process.stdout.isTTY;
const started = performance.now();
function bar(done: number, failed: number, total: number): string {
  const width = 30;
  const filled = Math.round(((done + failed) / total) * width);
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done + failed}/${total}  ok ${done}  failed ${failed}  ${secs}s`;
}

let stop = false;
const workers = Array.from({ length: concurrency }, (_, i) =>
  (async () => {
    while (!stop) {
      // Only publisher jobs: agent capability refreshes are left to the running instances.
      const n = await runCrawlBatch(
        deps,
        `cli:${process.pid}:${i}`,
        1,
        (domain, outcome) => {
          if (!tty)
            console.log(
              `${domain}: ${outcome instanceof Error ? `error ${outcome.message}` : 'adagents' in outcome ? `adagents ${outcome.adagents}, ${outcome.events} events` : outcome.status}`,
            );
        },
        ['publisher'],
      );
      if (n === 0) await Bun.sleep(200);
    }
  })(),
);

let rows: Awaited<ReturnType<typeof findJobs>> = [];
for (;;) {
  rows = await findJobs(db, ids);
  const done = rows.filter((r) => r.status === 'done').length;
  const failed = rows.filter((r) => r.status === 'failed').length;
  if (tty) process.stdout.write(`\r${bar(done, failed, ids.length)}`);
  if (done + failed === ids.length) break;
  await Bun.sleep(250);
}
stop = true;
await Promise.all(workers);
if (tty) process.stdout.write('\n');
for (const r of rows.sort((x, y) => x.domain.localeCompare(y.domain))) {
  if (r.status === 'failed') console.log(`${r.domain.padEnd(40)} FAILED  ${r.last_error ?? ''}`);
  else {
    const result = r.result as { adagents?: unknown; brand_json?: unknown; events?: number; changes?: Record<string, number> } | null;
    const c = result?.changes ?? {};
    console.log(
      `${r.domain.padEnd(40)} adagents ${String(result?.adagents).padEnd(8)} brand.json ${String(result?.brand_json).padEnd(11)} +${c.properties_created ?? 0} props, ${c.properties_stale ?? 0} stale, ${result?.events ?? 0} events`,
    );
  }
}
await deployment.stop();
process.exit(rows.some((r) => r.status === 'failed') ? 1 : 0);
