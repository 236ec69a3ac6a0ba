/**
 * Server under test for governance.bench.ts (its own process): a sales agent with the governance
 * agent in the same deployment (database catalog, simulated ad server, webhooks off), REST tasks,
 * on PGlite or Postgres (BENCH_STORAGE, schema BENCH_SCHEMA). Prints `READY <port>` once listening.
 */
// As hosts/start.ts does: the serving process runs with the memory budget (MEMORY_BUDGET_MB).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assemble } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { serve } from '../../hosts/serve.ts';
import storagePglite from '../../plugins/storage-pglite/index.ts';
import storagePostgres from '../../plugins/storage-postgres/index.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import inventoryDb from '../../plugins/inventory-db/index.ts';
import adServerSimulated from '../../plugins/ad-server-simulated/index.ts';
import { salesPlugins } from '../../config/sales.ts';
import governance from '../../plugins/governance/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import { applyMemoryBudget } from '../../hosts/memory-budget.ts';

applyMemoryBudget();

const storage =
  process.env.BENCH_STORAGE === 'postgres'
    ? storagePostgres({ url: process.env.DATABASE_URL!, schema: process.env.BENCH_SCHEMA ?? 'bench_governance', max: 10 })
    : storagePglite({ dataDir: mkdtempSync(join(tmpdir(), 'bench-pglite-')) });
const deployment = await assemble(
  definePreset({
    name: 'bench-governance',
    log: { level: 'silent' },
    plugins: [
      storage,
      auth({ testTokens: [{ token: 'bench-token-0123456789abcdef' }] }),
      tasks(),
      idempotency(),
      inventoryDb(),
      adServerSimulated(),
      governance(),
      ...salesPlugins(),
      webhooks({ outbox: { workers: false } }),
      restTasks(),
    ],
  }),
  { env: { LOG_LEVEL: 'silent' } },
);
const server = await serve(deployment, { port: 0, hostname: '127.0.0.1' });
console.log(`READY ${server.port}`);
process.on('SIGTERM', async () => {
  await server.close();
  process.exit(0);
});
