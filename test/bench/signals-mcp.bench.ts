/**
 * get_signals over MCP (Streamable HTTP, SSE answers): requests/s and p50/p95 latency against a
 * raw Bun.serve baseline answering the same bytes, and the server's RSS after the load. Runs on
 * PGlite, and on Postgres when DATABASE_URL is set, there also with WORKERS=2 beside WORKERS=1.
 *
 * A shared machine drifts (other tenants, clock changes), so the baseline stays up and each
 * configuration is measured in ROUNDS rounds alternating baseline and server, each ROUND_SECONDS
 * long; a round's ratio compares two neighbouring measurements and the median round is printed.
 * Servers run in their own processes; the load comes from this one. `BENCH_AUTH=api_key`
 * authenticates with an organization API key (the database-backed credential path).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROUND_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
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
  const stop = async () => {
    proc.kill();
    await proc.exited;
  };
  return { proc, url: `http://127.0.0.1:${port}/mcp`, token: key ?? TOKEN, stop };
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Math.round(Number(line.replace(/\D+/g, '')) / 1024);
}

interface Round {
  rps: number;
  latencies: number[];
}

/** CONCURRENCY clients calling for `seconds`; every answer must pass `check`. */
async function load(url: string, token: string, seconds: number, check: (text: string) => void): Promise<Round> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` };
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await fetch(url, { method: 'POST', headers, body: call });
        const text = await res.text();
        latencies.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`status ${res.status}: ${text.slice(0, 200)}`);
        check(text);
      }
    }),
  );
  return { rps: Math.round(latencies.length / seconds), latencies };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function quantiles(rounds: Round[]) {
  const all = rounds.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const q = (p: number) => all[Math.min(all.length - 1, Math.floor(p * all.length))]!;
  return { p50: q(0.5), p95: q(0.95) };
}
const fmt = (rps: number, rounds: Round[]) => {
  const { p50, p95 } = quantiles(rounds);
  return `${String(rps).padStart(6)} req/s  p50 ${p50.toFixed(1).padStart(5)} ms  p95 ${p95.toFixed(1).padStart(5)} ms`;
};

const signalsAnswer = (text: string) => {
  if (!text.includes('sig_')) throw new Error(`unexpected answer: ${text.slice(0, 300)}`);
};

// The baseline answers what the agent answers: a canned body of the real answer, taken from it.
const sample = await startServer({ BENCH_STORAGE: 'pglite' });
const sampleBody = await (
  await fetch(sample.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}` },
    body: call,
  })
).text();
signalsAnswer(sampleBody);
await sample.stop();
// The engine's own memory sizing (MEMORY_BUDGET_MB=0): the raw baseline gets no tuning of ours.
const baseline = await startServer({ BENCH_TARGET: 'baseline', BENCH_BODY: sampleBody, MEMORY_BUDGET_MB: '0' });

console.log(
  `get_signals over MCP, ${CONCURRENCY} concurrent clients, ${ROUNDS} rounds of ${ROUND_SECONDS} s alternating with the baseline, credential: ${process.env.BENCH_AUTH ?? 'test token'}`,
);
const runs: Array<{ storage: string; workers: number }> = [{ storage: 'pglite', workers: 1 }];
if (process.env.DATABASE_URL) runs.push({ storage: 'postgres', workers: 1 }, { storage: 'postgres', workers: 2 });
for (const { storage, workers } of runs) {
  const server = await startServer({ BENCH_STORAGE: storage, BENCH_WORKERS: String(workers) });
  // Warm-up of both (JIT, pools, caches), then the rounds.
  await load(server.url, server.token, 1, signalsAnswer);
  await load(baseline.url, baseline.token, 1, () => {});
  const base: Round[] = [];
  const subject: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    base.push(await load(baseline.url, baseline.token, ROUND_SECONDS, () => {}));
    subject.push(await load(server.url, server.token, ROUND_SECONDS, signalsAnswer));
  }
  const rss = rssMb(server.proc.pid);
  await server.stop();
  const ratio = median(subject.map((s, i) => s.rps / base[i]!.rps));
  const label = `${storage}, WORKERS=${workers}`;
  console.log(`  baseline raw Bun.serve           ${fmt(median(base.map((b) => b.rps)), base)}`);
  console.log(
    `  signals agent MCP (${label.padEnd(19)}) ${fmt(median(subject.map((s) => s.rps)), subject)}  = ${ratio.toFixed(3)}x baseline (median of ${ROUNDS} rounds: ${subject.map((s, i) => (s.rps / base[i]!.rps).toFixed(2)).join(', ')}), RSS after load ${rss} MB${workers > 1 ? ' (primary)' : ''}`,
  );
}
await baseline.stop();
