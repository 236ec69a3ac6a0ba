/**
 * get_signals over MCP (Streamable HTTP, SSE answers): requests/s and p50/p95 latency against a
 * raw Bun.serve baseline measured in the same run, and the server's RSS after the load.
 * Runs on PGlite, and on Postgres when DATABASE_URL is set, there also with WORKERS=2 beside
 * WORKERS=1. Servers run in their own process; the load comes from this one. `BENCH_AUTH=api_key`
 * authenticates with an organization API key (the database-backed credential path) instead of a
 * configured test token.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const TOKEN = 'bench-token-0123456789abcdef';

const call = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'get_signals',
    arguments: {
      signal_spec: 'sports fans streaming live games',
      deliver_to: { deployments: [{ type: 'platform', platform: 'the-trade-desk' }], countries: ['US'] },
      max_results: 5,
    },
  },
});

async function startServer(env: Record<string, string>) {
  const proc = Bun.spawn(['bun', join(import.meta.dir, 'signals-server.ts')], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!/READY (\d+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${out}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const [, port, key] = /READY (\d+)(?: (\S+))?/.exec(out)!;
  return { proc, port: Number(port), token: key ?? TOKEN };
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Math.round(Number(line.replace(/\D+/g, '')) / 1024);
}

async function load(url: string, check: (text: string) => void, token = TOKEN) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` };
  // Warm-up (JIT, query plans, pools), then measure.
  for (let i = 0; i < 50; i++) check(await (await fetch(url, { method: 'POST', headers, body: call })).text());
  const latencies: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await fetch(url, { method: 'POST', headers, body: call });
        const text = await res.text();
        latencies.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`status ${res.status}: ${text.slice(0, 200)}`);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  return { rps: Math.round(latencies.length / SECONDS), p50: q(0.5), p95: q(0.95), n: latencies.length };
}

const fmt = (r: { rps: number; p50: number; p95: number }) =>
  `${String(r.rps).padStart(6)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p95 ${r.p95.toFixed(1).padStart(6)} ms`;

// Baseline: the same request shape, a canned body of the real answer's size.
const sample = await startServer({ BENCH_STORAGE: 'pglite' });
const sampleBody = await (
  await fetch(`http://127.0.0.1:${sample.port}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}` },
    body: call,
  })
).text();
sample.proc.kill();
await sample.proc.exited;
const baseline = await startServer({ BENCH_TARGET: 'baseline', BENCH_BODY: sampleBody });
const base = await load(`http://127.0.0.1:${baseline.port}/mcp`, () => {});
baseline.proc.kill();
await baseline.proc.exited;
console.log(`get_signals over MCP, ${CONCURRENCY} concurrent clients, ${SECONDS} s per run, credential: ${process.env.BENCH_AUTH ?? 'test token'}`);
console.log(`baseline raw Bun.serve        ${fmt(base)}`);

const runs: Array<{ storage: string; workers: number }> = [{ storage: 'pglite', workers: 1 }];
if (process.env.DATABASE_URL) runs.push({ storage: 'postgres', workers: 1 }, { storage: 'postgres', workers: 2 });
for (const { storage, workers } of runs) {
  const server = await startServer({ BENCH_STORAGE: storage, BENCH_WORKERS: String(workers) });
  const result = await load(
    `http://127.0.0.1:${server.port}/mcp`,
    (text) => {
      if (!text.includes('sig_')) throw new Error(`unexpected answer: ${text.slice(0, 300)}`);
    },
    server.token,
  );
  const rss = rssMb(server.proc.pid);
  server.proc.kill();
  await server.proc.exited;
  const label = `${storage}, WORKERS=${workers}`;
  console.log(
    `signals agent MCP (${label.padEnd(20)})  ${fmt(result)}  = ${(result.rps / base.rps).toFixed(3)}x baseline, RSS after load ${rss} MB${workers > 1 ? ' (primary)' : ''}`,
  );
}
