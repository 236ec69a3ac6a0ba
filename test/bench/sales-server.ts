/**
 * Server under test for sales.bench.ts (its own process). `BENCH_TARGET=baseline` serves a raw
 * Bun.serve answering a canned body; otherwise the sales agent (database catalog, simulated ad
 * server, webhooks off) over MCP and REST on BENCH_STORAGE (pglite | postgres, schema
 * BENCH_SCHEMA). Prints `READY <port>` once listening.
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
import webhooks from '../../plugins/webhooks/index.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import { serveCanned } from './harness.ts';
import { applyMemoryBudget } from '../../hosts/memory-budget.ts';

applyMemoryBudget();

export const BENCH_TOKEN = 'bench-token-0123456789abcdef';

if (process.env.BENCH_TARGET === 'baseline') {
  const body = process.env.BENCH_BODY ?? '{}';
  serveCanned(() => body);
} else {
  const storage =
    process.env.BENCH_STORAGE === 'postgres'
      ? storagePostgres({ url: process.env.DATABASE_URL!, schema: process.env.BENCH_SCHEMA ?? 'bench_sales', max: 10 })
      : storagePglite({ dataDir: mkdtempSync(join(tmpdir(), 'bench-pglite-')) });
  const deployment = await assemble(
    definePreset({
      name: 'bench-sales',
      log: { level: 'silent' },
      plugins: [
        storage,
        auth({ testTokens: [{ token: BENCH_TOKEN }] }),
        tasks(),
        idempotency(),
        inventoryDb(),
        adServerSimulated(),
        ...salesPlugins(),
        webhooks({ outbox: { workers: false } }),
        mcpHost({ jsonResponse: true }),
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
}
