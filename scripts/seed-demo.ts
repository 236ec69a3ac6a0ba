#!/usr/bin/env bun
/**
 * `bun run seed-demo --agents N [--seed S] [--reset]`: fill the configured registry database
 * (DATABASE_URL, else the PGlite data directory) with a synthetic registry so every discovery
 * endpoint has something to show. The search adapter follows SEARCH / MEILISEARCH_URL; the index is
 * rebuilt through the registry's search outbox (SearchSync) once the rows are written.
 */
import { parseArgs } from 'node:util';
import { assemble } from '../core/deployment.ts';
import { Database } from '../core/ports/database.ts';
import { SearchSync } from '../core/ports/search-sync.ts';
import preset from '../config/registry.ts';
import { countAgents, resetDiscovery, seedDemo } from '../plugins/registry-agents/demo-seed.ts';
import { recordUnrecordedPublishers } from '../plugins/registry-agents/store/adagents-records.ts';
import { AdagentsRecords } from '../core/ports/authoritative-records.ts';
import { Clock } from '../core/ports/clock.ts';
import { Ids } from '../core/ports/ids.ts';
import { exitOnHelp, parseArgsOrExit } from '../lib/cli.ts';

const usage = `usage: bun run seed-demo [--agents N] [--seed S] [--reset]

Fills the registry database (DATABASE_URL, else the PGlite directory DATA_DIR) with a synthetic registry of
N agents (default 1000) and their publishers, deterministic for a seed (default 42). --reset replaces what
an earlier run seeded; without it a database that already holds agents is left alone.`;
exitOnHelp(usage);
const { values } = parseArgsOrExit(usage, () =>
  parseArgs({
    options: { agents: { type: 'string', default: '1000' }, seed: { type: 'string', default: '42' }, reset: { type: 'boolean', default: false } },
  }),
);
const agents = Number(values.agents);
if (!Number.isInteger(agents) || agents < 1 || agents > 1_000_000) {
  console.error('--agents must be an integer from 1 to 1000000');
  process.exit(2);
}
const deployment = await assemble(preset, { env: { LOG_LEVEL: 'warn', ...process.env } });
await deployment.start();
const db = deployment.get(Database);
const existing = await countAgents(db);
if (existing > 0 && !values.reset) {
  console.error(`the registry already holds ${existing} agents; pass --reset to replace them`);
  await deployment.stop();
  process.exit(1);
}
if (values.reset) await resetDiscovery(db);
const started = performance.now();
const summary = await seedDemo(db, {
  agents,
  seed: Number(values.seed),
  log: (m) => console.log(`  ${m}`),
  clock: deployment.get(Clock),
  ids: deployment.get(Ids),
});
// Property resolution learns the seeded publishers now rather than at the next server start.
const records = deployment.tryGet(AdagentsRecords);
if (records) {
  let recorded = 0;
  for (;;) {
    const n = await recordUnrecordedPublishers(db, records, deployment.get(Clock));
    if (n === 0) break;
    recorded += n;
  }
  console.log(`  ${recorded} publishers recorded for property resolution`);
}
const indexed = await deployment.get(SearchSync).reindex();
console.log(`  search index rebuilt (${indexed} agents)`);
console.log(`seeded in ${((performance.now() - started) / 1000).toFixed(1)} s:`, summary);
await deployment.stop();
