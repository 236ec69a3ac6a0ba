/**
 * Server under test for signals-mcp.bench.ts (its own process). `BENCH_TARGET=baseline` serves a
 * raw Bun.serve answering a canned JSON body; otherwise the signals agent over MCP on the storage
 * named by BENCH_STORAGE (pglite | postgres; BENCH_SCHEMA names the Postgres schema). Prints `READY <port>`
 * once listening.
 */
import 'reflect-metadata';
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

export const BENCH_TOKEN = 'bench-token-0123456789abcdef';

if (process.env.BENCH_TARGET === 'baseline') {
  const body = process.env.BENCH_BODY ?? '{}';
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      await req.text();
      return new Response(body, { headers: { 'content-type': 'application/json' } });
    },
  });
  console.log(`READY ${server.port}`);
} else {
  const storage =
    process.env.BENCH_STORAGE === 'postgres'
      ? storagePostgres({ url: process.env.DATABASE_URL!, schema: process.env.BENCH_SCHEMA ?? 'bench_signals', max: 10 })
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
  const server = await serve(deployment, { port: 0, hostname: '127.0.0.1' });
  console.log(`READY ${server.port}`);
  process.on('SIGTERM', async () => {
    await server.close();
    process.exit(0);
  });
}
