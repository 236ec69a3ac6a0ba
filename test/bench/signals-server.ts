/**
 * Server under test for signals-mcp.bench.ts (its own process). `BENCH_TARGET=baseline` serves a
 * raw Bun.serve answering a canned JSON body; otherwise the signals agent over MCP on the storage
 * named by BENCH_STORAGE (pglite | postgres; schema BENCH_SCHEMA). Prints `READY <port>` once listening; with
 * `BENCH_AUTH=api_key` it also mints an organization API key and prints `READY <port> <key>`, so
 * calls authenticate through the database-backed path instead of a configured test token.
 */
// As hosts/start.ts does: the serving process runs with the memory budget (MEMORY_BUDGET_MB).
import { defaultIds } from '../../core/ports/ids.ts';
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
import signals from '../../plugins/signals/index.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import { followPrimary, isWorker, startWorkers, type Workers } from '../../hosts/workers.ts';
import { Database } from '../../core/ports/database.ts';
import { createApiKey, createOrganization } from '../../plugins/auth/store.ts';
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
      ? storagePostgres({ url: process.env.DATABASE_URL!, schema: process.env.BENCH_SCHEMA ?? 'bench_signals', max: Number(process.env.BENCH_POOL ?? 10) })
      : storagePglite({ dataDir: mkdtempSync(join(tmpdir(), 'bench-pglite-')) });
  const deployment = await assemble(
    definePreset({
      name: 'bench-signals',
      log: { level: 'silent' },
      plugins: [
        storage,
        auth({ testTokens: [{ token: BENCH_TOKEN }] }),
        tasks(),
        idempotency(),
        signals(),
        mcpHost({ jsonResponse: process.env.BENCH_JSON === '1' }),
      ],
    }),
    { env: { LOG_LEVEL: 'silent' } },
  );
  // BENCH_WORKERS=N: N processes on one port, through the same mechanism as WORKERS=N (hosts/workers.ts).
  const worker = isWorker();
  const workers = Number(process.env.BENCH_WORKERS ?? 1);
  const server = await serve(deployment, { port: worker ? Number(process.env.PORT) : 0, hostname: '127.0.0.1', reusePort: worker || workers > 1 });
  let others: Workers | null = null;
  if (worker) followPrimary(() => void server.close().then(() => process.exit(0)));
  else {
    if (workers > 1) {
      others = startWorkers(workers, server.port, deployment.logger);
      await Bun.sleep(3000); // the workers boot and join the port before the load starts
    }
    let key = '';
    if (process.env.BENCH_AUTH === 'api_key') {
      const db = deployment.get(Database);
      const org = await createOrganization(db, defaultIds, { name: `bench-${process.pid}-${Date.now()}`, tier: 'member' });
      key = ` ${(await createApiKey(db, defaultIds, { orgId: org.id, name: 'bench' })).key}`;
    }
    console.log(`READY ${server.port}${key}`);
  }
  process.on('SIGTERM', async () => {
    await Promise.all([others?.stop(), server.close()]);
    process.exit(0);
  });
}
