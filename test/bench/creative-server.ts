/**
 * Server under test for creative.bench.ts (its own process). `BENCH_TARGET=baseline` serves a raw
 * Bun.serve answering canned bodies (`/list` and `/preview`, files named by BENCH_LIST_BODY and
 * BENCH_PREVIEW_BODY, content type BENCH_CONTENT_TYPE); otherwise the creative agent over MCP on
 * the storage named by BENCH_STORAGE (pglite | postgres). Prints `READY <port>` once listening.
 */
// As hosts/start.ts does: the serving process runs with the memory budget (MEMORY_BUDGET_MB).
import { mkdtempSync, readFileSync } from 'node:fs';
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
import creative from '../../plugins/creative/index.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import { serveCanned } from './harness.ts';
import { applyMemoryBudget } from '../../hosts/memory-budget.ts';

applyMemoryBudget();

export const BENCH_TOKEN = 'bench-token-0123456789abcdef';
export const BENCH_AGENT_URL = 'https://creative.bench.example';

if (process.env.BENCH_TARGET === 'baseline') {
  const bodies: Record<string, string> = {
    '/list': readFileSync(process.env.BENCH_LIST_BODY!, 'utf8'),
    '/preview': readFileSync(process.env.BENCH_PREVIEW_BODY!, 'utf8'),
  };
  const type = process.env.BENCH_CONTENT_TYPE ?? 'application/json';
  serveCanned((path) => bodies[path] ?? '{}', type);
} else {
  const storage =
    process.env.BENCH_STORAGE === 'postgres'
      ? storagePostgres({ url: process.env.DATABASE_URL!, schema: 'bench_creative', max: 10 })
      : storagePglite({ dataDir: mkdtempSync(join(tmpdir(), 'bench-pglite-')) });
  const deployment = await assemble(
    definePreset({
      name: 'bench-creative',
      log: { level: 'silent' },
      plugins: [storage, auth({ testTokens: [{ token: BENCH_TOKEN }] }), tasks(), idempotency(), creative({ agentUrl: BENCH_AGENT_URL }), mcpHost()],
    }),
    { env: { LOG_LEVEL: 'silent', PUBLIC_URL: 'http://127.0.0.1:1' } },
  );
  const server = await serve(deployment, { port: 0, hostname: '127.0.0.1' });
  console.log(`READY ${server.port}`);
  process.on('SIGTERM', async () => {
    await server.close();
    process.exit(0);
  });
}
