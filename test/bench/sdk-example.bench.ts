#!/usr/bin/env bun
/**
 * `get_signals` over MCP beside the official SDK's example signals agent
 * (conformance/node_modules/@adcp/sdk/examples/signals-agent.ts: three segments in memory, no
 * upstream), measured in one run, on loopback, each agent in its own process: ours under Bun, the
 * example under each runtime of BENCH_SDK_RUNTIMES (default `node,bun`: `node` is how its header says to
 * run it, `npx tsx examples/signals-agent.ts`, with the tsx pinned in conformance/; `bun` runs the same
 * file under Bun). The same tools/call body (the same headers) goes to each from a load generator in its own process
 * (load.ts), BENCH_CONCURRENCY connections, in BENCH_ROUNDS rounds of BENCH_SECONDS alternating
 * the order of agents, after an unmeasured round each; each ratio (ours against one run of the example) is the
 * median of the rounds' ratios, of req/s and of each server's CPU time per request (which the machine's load does not
 * scale). Ours is the agents' deployment of table.bench.ts (agents-server.ts) on Postgres when
 * DATABASE_URL is set, else PGlite.
 * The example runs as its README says (`serve()` on PORT), with NODE_ENV=production (the SDK's
 * fastest setting: no AJV validation of requests or answers; BENCH_SDK_NODE_ENV=development measures
 * its default strict validation) and ADCP_DECISIONING_ALLOW_INMEMORY_STATE=1 (its in-memory state
 * store refuses to start without it outside development). BENCH_PROFILE=<dir>: a CPU profile of our
 * server (summarise with cpuprofile.ts). Skips when the conformance package is not installed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { cpuMs, load, loadAverage, rssMb, spawnServer, type LoadResult, type Spawned } from './harness.ts';

const SDK_DIR = join(import.meta.dir, '../../conformance/node_modules/@adcp/sdk');
const EXAMPLE = join(SDK_DIR, 'examples/signals-agent.ts');
if (!existsSync(EXAMPLE)) {
  console.log(`sdk-example: skipped, ${EXAMPLE} is missing (install it: bun install --cwd conformance --frozen-lockfile)`);
  process.exit(0);
}
const SDK_VERSION = (JSON.parse(readFileSync(join(SDK_DIR, 'package.json'), 'utf8')) as { version: string }).version;

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SDK_NODE_ENV = process.env.BENCH_SDK_NODE_ENV ?? 'production';
/** tsx's loader in node itself (`node --import`), not its CLI, which runs node as a child: one process to measure. */
const TSX = join(import.meta.dir, '../../conformance/node_modules/tsx/dist/loader.mjs');
const RUNTIMES = (process.env.BENCH_SDK_RUNTIMES ?? 'node,bun').split(',').filter((r) => r === 'bun' || (r === 'node' && existsSync(TSX)));
if (!RUNTIMES.length) throw new Error('BENCH_SDK_RUNTIMES: node (needs conformance/ installed) and/or bun');
const NODE_VERSION = RUNTIMES.includes('node') ? (await Bun.$`node --version`.text()).trim() : '';
const JSON_OUT = process.argv.includes('--json');
const log = (line: string) => (JSON_OUT ? console.error(line) : console.log(line));

/** agents-server.ts's token (importing it would start a server); the example has no authentication and ignores it. */
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer bench-token-0123456789abcdef' };
/**
 * A brief both catalogs match ("High Intent Shoppers" of the example's three; several shopper
 * segments of ours), with the deployment target a buyer names (the example ignores it). One
 * result (BENCH_MAX_RESULTS) so both answers carry one signal: the example has no second shopper.
 */
const ARGS = {
  signal_spec: 'shoppers',
  deliver_to: { deployments: [{ type: 'platform', platform: 'the-trade-desk' }], countries: ['US'] },
  max_results: Number(process.env.BENCH_MAX_RESULTS ?? 1),
};
const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_signals', arguments: ARGS } });

const storage = process.env.DATABASE_URL ? 'postgres' : 'pglite';
const schema = `bench_sdk_${process.pid}`;
const loadBefore = loadAverage();
const servers: Spawned[] = [];
process.on('exit', () => {
  for (const s of servers) {
    try {
      process.kill(s.pid);
    } catch {} // already gone
  }
});
const ours = await spawnServer(
  join(import.meta.dir, 'agents-server.ts'),
  [],
  { BENCH_STORAGE: storage, BENCH_SCHEMA: schema },
  { bunArgs: process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE] : [] },
);
servers.push(ours);
const examples: Array<{ runtime: string; server: Spawned }> = [];
for (const runtime of RUNTIMES) {
  const server = await spawnServer(
    EXAMPLE,
    [],
    { PORT: '0', NODE_ENV: SDK_NODE_ENV, ADCP_DECISIONING_ALLOW_INMEMORY_STATE: '1' },
    { ready: /AdCP agent running at http:\/\/[^:/]+:(\d+)/, launcher: runtime === 'node' ? ['node', '--import', pathToFileURL(TSX).href] : undefined },
  );
  servers.push(server);
  examples.push({ runtime, server });
}

interface Agent {
  name: string;
  run: string;
  url: string;
  pid: number;
  rounds: Array<LoadResult & { cpu_ms_per_request: number; client_cpu_ms_per_request: number }>;
  signals: number;
  bytes: number;
}
/** One call, checked: the answer's signal count and size (an SSE message either way). */
async function probe(url: string): Promise<{ signals: number; bytes: number }> {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body: BODY });
  const text = await res.text();
  const data = /^data: (.*)$/m.exec(text)?.[1];
  const result = data ? (JSON.parse(data) as { result?: { isError?: boolean; structuredContent?: { signals?: unknown[] } } }).result : undefined;
  const signals = result?.structuredContent?.signals;
  if (res.status !== 200 || result?.isError || !signals) throw new Error(`${url}: status ${res.status}: ${text.slice(0, 400)}`);
  return { signals: signals.length, bytes: Buffer.byteLength(text) };
}
const agents: Agent[] = [
  {
    name: 'this framework',
    run: `test/bench/agents-server.ts (every agent, one deployment; MCP Streamable HTTP, SSE answers) on ${storage}, bun ${Bun.version}`,
    url: `http://127.0.0.1:${ours.port}/mcp`,
    pid: ours.pid,
    rounds: [],
    signals: 0,
    bytes: 0,
  },
  ...examples.map(({ runtime, server }) => ({
    name: `SDK example (${runtime})`,
    run: `@adcp/sdk ${SDK_VERSION} examples/signals-agent.ts (serve(), stateless MCP Streamable HTTP), ${runtime === 'node' ? `node ${NODE_VERSION} with tsx` : `bun ${Bun.version}`}, NODE_ENV=${SDK_NODE_ENV}`,
    url: `http://127.0.0.1:${server.port}/mcp`,
    pid: server.pid,
    rounds: [],
    signals: 0,
    bytes: 0,
  })),
];
for (const a of agents) Object.assign(a, await probe(a.url));

/** One load run; the server's and the load generator's CPU time over it (its warm-up second included) per request. */
async function measure(a: Agent, seconds: number) {
  const [server, client] = [cpuMs(a.pid), cpuMs('self', true)];
  const result = await load(a.url, { concurrency: CONCURRENCY, seconds, method: 'POST', body: BODY, headers: HEADERS });
  const per = (ms: number) => Math.round((ms / (result.requests + result.warmup_requests)) * 1000) / 1000;
  return { ...result, cpu_ms_per_request: per(cpuMs(a.pid) - server), client_cpu_ms_per_request: per(cpuMs('self', true) - client) };
}
// An unmeasured round each first: the example's JIT keeps speeding up for a few thousand calls.
for (const a of agents) await measure(a, WARMUP_SECONDS);
for (let r = 0; r < ROUNDS; r++) {
  // Alternate the order so a drift in the machine's load favours none.
  for (const a of r % 2 ? [...agents].reverse() : agents) a.rounds.push(await measure(a, SECONDS));
  log(
    `  round ${r + 1}: ${agents.map((a) => `${a.name} ${a.rounds[r]!.rps}/s, ${a.rounds[r]!.cpu_ms_per_request} CPU ms/request`).join('; ')}; load average ${loadAverage()}`,
  );
}
const rss = await Promise.all(agents.map((a) => rssMb(a.pid)));
for (const a of agents) await probe(a.url); // still answering correctly after the load
const loadAfter = loadAverage();
await Promise.all(servers.map((s) => s.stop()));
servers.length = 0;
if (storage === 'postgres') {
  const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const [mine, ...theirs] = agents as [Agent, ...Agent[]];
const round2 = (x: number) => Math.round(x * 100) / 100;
/** Ours against one run of the example: req/s and (what the machine's load does not scale) server CPU per request. */
const comparisons = theirs.map((t) => {
  const ratios = mine.rounds.map((m, i) => round2(m.rps / t.rounds[i]!.rps));
  const cpuRatios = mine.rounds.map((m, i) => round2(t.rounds[i]!.cpu_ms_per_request / m.cpu_ms_per_request));
  return { against: t.name, ratio: median(ratios), round_ratios: ratios, cpu_ratio: median(cpuRatios), round_cpu_ratios: cpuRatios };
});
const summary = agents.map((a, i) => ({
  agent: a.name,
  run: a.run,
  rps: median(a.rounds.map((x) => x.rps)),
  p50_ms: median(a.rounds.map((x) => x.p50_ms)),
  p95_ms: median(a.rounds.map((x) => x.p95_ms)),
  errors: a.rounds.reduce((n, x) => n + x.errors, 0),
  cpu_ms_per_request: median(a.rounds.map((x) => x.cpu_ms_per_request)),
  client_cpu_ms_per_request: median(a.rounds.map((x) => x.client_cpu_ms_per_request)),
  signals: a.signals,
  answer_bytes: a.bytes,
  rss_mb: rss[i],
}));
const meta = {
  task: 'get_signals',
  request: ARGS,
  storage,
  concurrency: CONCURRENCY,
  rounds: ROUNDS,
  seconds: SECONDS,
  cores: navigator.hardwareConcurrency,
  load_before: loadBefore,
  load_after: loadAfter,
  comparisons,
};
if (JSON_OUT) console.log(JSON.stringify({ ...meta, agents: summary }, null, 2));
else {
  console.log(
    `\nget_signals over MCP, ${CONCURRENCY} concurrent connections, ${ROUNDS} alternating rounds of ${SECONDS} s (load generator in its own process); ${meta.cores} cores, load average ${loadBefore} before, ${loadAfter} after`,
  );
  console.log(`request: tools/call get_signals ${JSON.stringify(ARGS)}`);
  for (const s of summary) {
    console.log(
      `${s.agent.padEnd(20)} ${String(s.rps).padStart(7)} req/s  p50 ${s.p50_ms.toFixed(2).padStart(6)} ms  p95 ${s.p95_ms.toFixed(2).padStart(6)} ms  errors ${s.errors}  CPU ms/request ${s.cpu_ms_per_request.toFixed(3)} (load generator ${s.client_cpu_ms_per_request.toFixed(3)})  ${s.signals} signals, ${s.answer_bytes} B answer  RSS ${s.rss_mb} MB`,
    );
    console.log(`${''.padEnd(20)} ${s.run}`);
  }
  for (const c of comparisons) {
    console.log(
      `against ${c.against}: ratio ${c.ratio.toFixed(2)}x req/s (rounds: ${c.round_ratios.join(', ')}); target >= 10x: ${c.ratio >= 10 ? 'met' : 'not met'}`,
    );
    console.log(
      `against ${c.against}: ratio ${c.cpu_ratio.toFixed(2)}x in server CPU per request (rounds: ${c.round_cpu_ratios.join(', ')})${storage === 'postgres' ? "; the Postgres server's own CPU is not counted" : ''}`,
    );
  }
}
process.exit(0);
