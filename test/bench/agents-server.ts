/**
 * Server under test for the task table (table.bench.ts), in its own process.
 * `BENCH_TARGET=baseline`: a raw Bun.serve answering, for each path, the bytes in the file
 * `BENCH_BODIES/<path>` (content type BENCH_CONTENT_TYPE). Otherwise every agent in one deployment
 * (signals, sales with the database catalog and simulated ad server, creative, governance) over MCP
 * (Streamable HTTP, SSE answers, as deployed) on BENCH_STORAGE (pglite | postgres, schema
 * BENCH_SCHEMA). Prints `READY <port> <control port>`: the control port records the SQL the next
 * calls write (POST /record, then GET /recorded), which the table replays as the raw-SQL baseline.
 */
// As hosts/start.ts does: the serving process runs with the memory budget (MEMORY_BUDGET_MB).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assemble } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import { buildApp, listenSettings, scheduleIdleCollection, type Handler } from '../../hosts/serve.ts';
import storagePglite from '../../plugins/storage-pglite/index.ts';
import storagePostgres from '../../plugins/storage-postgres/index.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import signals from '../../plugins/signals/index.ts';
import inventoryDb from '../../plugins/inventory-db/index.ts';
import adServerSimulated from '../../plugins/ad-server-simulated/index.ts';
import governance from '../../plugins/governance/index.ts';
import creative from '../../plugins/creative/index.ts';
import { salesPlugins } from '../../config/sales.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import { Database, type Queryable } from '../../core/ports/database.ts';
import type { SqlFragment } from '../../core/sql.ts';
import { serveCanned } from './harness.ts';
import { renew, type Statement } from './replay.ts';
import { applyMemoryBudget } from '../../hosts/memory-budget.ts';

applyMemoryBudget();

const BENCH_TOKEN = 'bench-token-0123456789abcdef';
const BENCH_AGENT_URL = 'https://creative.bench.example';

if (process.env.BENCH_TARGET === 'baseline') {
  const dir = process.env.BENCH_BODIES!;
  const bodies = new Map<string, string>();
  const type = process.env.BENCH_CONTENT_TYPE ?? 'text/event-stream';
  serveCanned((path) => {
    let body = bodies.get(path);
    if (body === undefined) bodies.set(path, (body = readFileSync(join(dir, path.slice(1)), 'utf8')));
    return body;
  }, type);
} else {
  const storage =
    process.env.BENCH_STORAGE === 'postgres'
      ? storagePostgres({ url: process.env.DATABASE_URL!, schema: process.env.BENCH_SCHEMA ?? 'bench_agents', max: 10 })
      : storagePglite({ dataDir: mkdtempSync(join(tmpdir(), 'bench-pglite-')) });
  const deployment = await assemble(
    definePreset({
      name: 'bench-agents',
      log: { level: 'silent' },
      plugins: [
        storage,
        auth({ testTokens: [{ token: BENCH_TOKEN }] }),
        tasks(),
        idempotency(),
        signals(),
        inventoryDb(),
        adServerSimulated(),
        governance(),
        creative({ agentUrl: BENCH_AGENT_URL }),
        ...salesPlugins(),
        webhooks({ outbox: { workers: false } }),
        mcpHost(),
      ],
    }),
    {
      env: {
        LOG_LEVEL: 'silent',
        PUBLIC_URL: 'http://127.0.0.1:1',
        // The table bench times the idle collection and shrink around its rounds (table.bench.ts).
        ...Object.fromEntries(['IDLE_COLLECT_MS', 'IDLE_SHRINK_MS'].flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : []))),
      },
    },
  );

  // Recording: the statements that change rows, and those that lock for a write (FOR UPDATE/SHARE,
  // advisory locks: writes to one row serialize on them), with their parameters, in order. Plain reads are left out.
  // Only statements of a request still in flight count: a background job's write (an outbox or a
  // lifecycle pass that happens to run meanwhile) is not the call's, and once made the baseline slower.
  const recorded: Array<{ text: string; values: unknown[] }> = [];
  let recording = false;
  const inFlight = new AsyncLocalStorage<{ open: boolean }>();
  const WRITE = /^\s*(insert|update|delete|with\b[\s\S]*\b(insert|update|delete)\b)|\bfor (no key )?(update|share)\b|pg_advisory_xact_lock/i;
  const record = (statement: SqlFragment) => {
    if (!recording || !inFlight.getStore()?.open) return;
    const { text, values } = statement.build();
    if (WRITE.test(text)) recorded.push({ text, values });
  };
  const db = deployment.get(Database);
  const query = db.query.bind(db);
  const transaction = db.transaction.bind(db);
  db.query = (<T>(statement: SqlFragment) => {
    record(statement);
    return query<T>(statement);
  }) as typeof db.query;
  db.transaction = (<T>(fn: (tx: Queryable) => Promise<T>) =>
    transaction((tx) =>
      fn({
        query: <R>(statement: SqlFragment) => {
          record(statement);
          return tx.query<R>(statement);
        },
      }),
    )) as typeof db.transaction;
  const control = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (req) => {
      const path = new URL(req.url).pathname;
      if (path === '/replay') {
        // PGlite's baseline: the statements run raw in this process, in one transaction.
        const { statements, keep } = (await req.json()) as { statements: Statement[]; keep: string[] };
        await transaction(async (tx) => {
          for (const s of renew(statements, new Set(keep))) await tx.query({ build: () => s } as SqlFragment);
        });
        return new Response('ok');
      }
      if (path === '/record') {
        recorded.length = 0;
        recording = true;
        return new Response('ok');
      }
      recording = false;
      return Response.json(recorded);
    },
  });

  // Served as hosts/serve.ts serves, its routes wrapped for the recording.
  await deployment.start();
  const app = buildApp(deployment, scheduleIdleCollection(deployment));
  const tracked =
    (handle: Handler): Handler =>
    (request, server) => {
      // Only while recording: an async context costs every call under load.
      if (!recording) return handle(request, server);
      const call = { open: true };
      return inFlight.run(call, () => handle(request, server)).finally(() => (call.open = false));
    };
  const routes = Object.fromEntries(
    Object.entries(app.routes).map(([path, h]) => [
      path,
      typeof h === 'function' ? tracked(h) : Object.fromEntries(Object.entries(h).map(([m, f]) => [m, tracked(f!)])),
    ]),
  );
  const server = Bun.serve({ routes, fetch: app.fetch, ...listenSettings(deployment, { port: 0, hostname: '127.0.0.1' }) });
  console.log(`READY ${server.port} ${control.port}`);
  process.on('SIGTERM', async () => {
    control.stop(true);
    await server.stop(true);
    await deployment.stop();
    process.exit(0);
  });
}
