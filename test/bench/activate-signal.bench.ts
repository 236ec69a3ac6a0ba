/**
 * activate_signal over MCP on Postgres, each request with a fresh idempotency_key and a fresh
 * target (a sales agent URL: one target activates once per principal), against a baseline in the
 * same run: a raw postgres.js transaction inserting the same rows (idempotency record, activation,
 * task record and its history row) at the same concurrency. Prints both req/s and the ratio, and
 * for scale what MCP alone allows (a task that touches no database, on the same server).
 * A shared machine drifts, so baseline and server alternate in ROUNDS rounds of SECONDS each and
 * the median round's ratio is printed. Needs DATABASE_URL. The server runs in its own process; the
 * load and the baseline in this one.
 */
import postgres from 'postgres';
import { spawnServer } from './harness.ts';
/** signals-server.ts's test token (importing it would start a server). */
const BENCH_TOKEN = 'bench-token-0123456789abcdef';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const SCHEMA = process.env.BENCH_SCHEMA ?? 'bench_activate_signal';
const url = process.env.DATABASE_URL;
if (!url) {
  console.log('activate_signal bench skipped: DATABASE_URL is not set (it measures Postgres)');
  process.exit(0);
}

interface Result {
  rps: number;
  p50: number;
  p95: number;
  n: number;
}

/** Run `once` from CONCURRENCY loops for SECONDS (after a warm-up); `i` is unique per call. */
let i = 0;
async function measure(once: (i: number) => Promise<void>): Promise<Result> {
  for (let w = 0; w < 50; w++) await once(i++);
  const latencies: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await once(i++);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  return { rps: Math.round(latencies.length / SECONDS), p50: q(0.5), p95: q(0.95), n: latencies.length };
}

const fmt = (r: Result) => `${String(r.rps).padStart(6)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p95 ${r.p95.toFixed(1).padStart(6)} ms  (${r.n} calls)`;
const run = `${process.pid}-${Date.now().toString(36)}`;

const admin = postgres(url, { max: 1, onnotice: () => {} });
await admin.unsafe(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
await admin.end();

const server = await spawnServer(`${import.meta.dir}/signals-server.ts`, [], { BENCH_STORAGE: 'postgres', BENCH_SCHEMA: SCHEMA });
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${BENCH_TOKEN}` };
const activate = async (i: number) => {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: i,
    method: 'tools/call',
    params: {
      name: 'activate_signal',
      arguments: {
        signal_agent_segment_id: 'sig_auto_intenders_suv',
        deployments: [{ type: 'agent', agent_url: `https://sales-${run}-${i}.bench.example/mcp` }],
        idempotency_key: `bench-${run}-${i}`,
      },
    },
  });
  const res = await fetch(`http://127.0.0.1:${server.port}/mcp`, { method: 'POST', headers, body });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('submitted') || text.includes('"isError":true'))
    throw new Error(`unexpected answer ${res.status}: ${text.slice(0, 300)}`);
};
// The ceiling MCP itself leaves: a task that touches no database, on the same server.
const capabilities = async (i: number) => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'get_proto_capabilities', arguments: {} } });
  const res = await fetch(`http://127.0.0.1:${server.port}/mcp`, { method: 'POST', headers, body });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('supported_protocols')) throw new Error(`unexpected answer ${res.status}: ${text.slice(0, 300)}`);
};

// Baseline: the same rows, written by postgres.js directly (pipelined in one transaction), same pool size as the server.
const sql = postgres(url, { max: 10, onnotice: () => {}, connection: { search_path: `${SCHEMA},public` } });
const direct = async (i: number) => {
  const id = crypto.randomUUID();
  const now = new Date();
  const response = { status: 'submitted', task_id: id, deployments: [{ type: 'agent', is_live: false }] };
  await sql.begin((tx) => [
    tx`INSERT INTO idempotency_keys (principal_id, key, task_name, payload_hash, state, claim_id, response, created_at, claimed_until, expires_at)
       VALUES ('baseline', ${`base-${run}-${i}`}, 'activate_signal', 'h', 'completed', ${id}, ${tx.json(response)}, ${now}, ${now}, ${now})`,
    tx`INSERT INTO signal_activations (id, signal_id, principal_id, destination_key, destination, status, activation_key, estimated_minutes, ready_at, created_at)
       VALUES (${crypto.randomUUID()}, 'sig_auto_intenders_suv', 'baseline', ${`agent:${run}-${i}`}, ${tx.json({ type: 'agent' })}, 'pending',
               ${tx.json({ type: 'key_value' })}, 60, ${now}, ${now})`,
    tx`INSERT INTO tasks (id, task_type, protocol, principal_id, status, result, context_id, state, run_at, sequence, created_at, updated_at)
       VALUES (${id}, 'activate_signal', 'signals', 'baseline', 'submitted', ${tx.json(response)}, ${id}, ${tx.json({})}, ${now}, 1, ${now}, ${now})`,
    tx`INSERT INTO task_status_history (task_id, sequence, status, at) VALUES (${id}, 1, 'submitted', ${now})`,
  ]);
};

const base: Result[] = [];
const mcp: Result[] = [];
for (let r = 0; r < ROUNDS; r++) {
  base.push(await measure(direct));
  mcp.push(await measure(activate));
}
const ceiling = await measure(capabilities);
await server.stop();
await sql.end();

const cleanup = postgres(url, { max: 1, onnotice: () => {} });
await cleanup.unsafe(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
await cleanup.end();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** The round whose ratio is the median one (its two measurements are printed). */
const ratios = mcp.map((m, r) => m.rps / base[r]!.rps);
const mid = ratios.indexOf(median(ratios));
console.log(
  `activate_signal over MCP on Postgres, ${CONCURRENCY} concurrent clients, ${ROUNDS} rounds of ${SECONDS} s alternating with the baseline (fresh idempotency_key per call)`,
);
console.log(`baseline raw postgres.js transaction  ${fmt(base[mid]!)}`);
console.log(
  `activate_signal MCP                   ${fmt(mcp[mid]!)}  ratio ${ratios[mid]!.toFixed(2)}x (median of rounds: ${ratios.map((x) => x.toFixed(2)).join(', ')})`,
);
console.log(`(MCP ceiling: capabilities, no DB      ${fmt(ceiling)}  ratio ${(ceiling.rps / base[mid]!.rps).toFixed(2)}x)`);
