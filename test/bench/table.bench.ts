/**
 * One table of every task the agents serve, over MCP (Streamable HTTP, SSE answers) on one
 * deployment of all agents (agents-server.ts), on Postgres (when DATABASE_URL is set) and PGlite.
 * - A read task is measured against a raw Bun.serve answering the same bytes (its answer, taken
 *   from the agent once).
 * - A write is measured against the raw SQL of its writes: the INSERT/UPDATE/DELETE statements (and row or advisory locks)
 *   one call of the task issued (recorded in the server), replayed in one transaction with the
 *   call's fresh ids replaced by new ones. On Postgres through postgres.js from this process; on
 *   PGlite (embedded: one process owns it) by the server process itself, behind its control port.
 * After a warm-up under load (BENCH_WARM_SECONDS each, default 2: the engine has compiled the hot code),
 * baseline and agent alternate in ROUNDS rounds of SECONDS each; a round's ratio compares two
 * neighbouring measurements and the median is printed; p50/p95 are over all the agent's rounds,
 * RSS is the server's at the end of the whole load, once idle (SETTLE_MS later: it collected its garbage) and
 * once idle longer (SHRINK_SETTLE_MS after that: it also dropped its compiled code). `--json` prints the rows as JSON instead.
 * BENCH_TASKS=a,b measures only those tasks, BENCH_STORAGES=postgres|pglite one storage, BENCH_BUN_ARGS
 * runtime flags of the agents' server (`--smol`).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { ID, renew, type Statement } from './replay.ts';

/** agents-server.ts's token and creative agent URL (importing it would start a server). */
const BENCH_TOKEN = 'bench-token-0123456789abcdef';
const BENCH_AGENT_URL = 'https://creative.bench.example';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
/** Load on each side before its rounds (BENCH_WARM_SECONDS; 0: 20 calls only). */
const WARM_SECONDS = Number(process.env.BENCH_WARM_SECONDS ?? 2);
// The server collects once idle for IDLE_MS (hosts/idle-collect.ts): longer than a round, so it never
// collects while its baseline runs (that would be its garbage collected on the baseline's time); after
// the load it has collected within two such intervals, and its allocator has returned the pages a few seconds later.
const IDLE_MS = Math.max(SECONDS, WARM_SECONDS) * 1000 + 1000;
const SETTLE_MS = 2 * IDLE_MS + 3000;
// The shrink (IDLE_SHRINK_MS, 30 s by default) after a shorter idle, for the same reason; still longer than any pause of the load.
const SHRINK_MS = 2 * IDLE_MS;
const SHRINK_SETTLE_MS = 2 * SHRINK_MS + 3000 - SETTLE_MS;
const JSON_OUT = process.argv.includes('--json');
const ONLY = process.env.BENCH_TASKS?.split(',');
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${BENCH_TOKEN}` };
const log = (line: string) => (JSON_OUT ? console.error(line) : console.log(line));

const spawned = new Set<ReturnType<typeof Bun.spawn>>();
process.on('exit', () => {
  for (const p of spawned) p.kill();
});
async function start(env: Record<string, string>, dir = import.meta.dir) {
  // BENCH_PROFILE=<dir>: the agents' server writes a CPU profile there when it stops (summarise with cpuprofile.ts).
  const profile = process.env.BENCH_PROFILE && !env.BENCH_TARGET ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE] : [];
  // BENCH_BUN_ARGS: runtime flags for the agents' server, e.g. `--smol` (a smaller heap, collected more often).
  const runtime = process.env.BENCH_BUN_ARGS?.split(' ').filter(Boolean) ?? [];
  const proc = Bun.spawn(['bun', ...runtime, ...profile, join(dir, 'agents-server.ts')], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  spawned.add(proc);
  const reader = proc.stdout.getReader();
  let out = '';
  while (!/READY (\d+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${out}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const [, port, control] = /READY (\d+)(?: (\d+))?/.exec(out)!;
  return {
    proc,
    url: `http://127.0.0.1:${port}`,
    control: `http://127.0.0.1:${control}`,
    async stop() {
      proc.kill();
      await proc.exited;
      spawned.delete(proc);
    },
  };
}
/** CPU time (user + system) a process used so far, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const rssMb = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024);

// ---- The calls. `args(u)` gets a fresh UUID per call (ids, idempotency keys, names that must be new).
const rpc = (name: string, args: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
const fresh = () => crypto.randomUUID();
const END = '2100-01-01T00:00:00Z';
const BUY_END = new Date(Date.now() + 30 * 86_400_000).toISOString();
const EVENT_TIME = new Date(Date.now() - 3_600_000).toISOString();
const nativeManifest = (i: number) => ({
  format_id: { agent_url: BENCH_AGENT_URL, id: 'native_standard' },
  assets: {
    title: { asset_type: 'text', content: `Rocket Skates ${i}` },
    description: { asset_type: 'text', content: 'Go faster than the road runner.' },
    main_image: { asset_type: 'image', url: `https://cdn.acme.example/skates-${i}.jpg`, width: 1200, height: 627 },
    cta_text: { asset_type: 'text', content: 'Shop now' },
    sponsored_by: { asset_type: 'text', content: 'Acme Rockets' },
  },
});
interface Setup {
  account: string;
  buy: string;
  pkg: string;
}
interface Task {
  name: string;
  label?: string;
  kind: 'read' | 'write';
  args: (s: Setup, u: string) => unknown;
}
const buyArgs = (s: Setup, u: string) => ({
  idempotency_key: u,
  account: { account_id: s.account },
  start_time: 'asap',
  end_time: BUY_END,
  packages: [{ product_id: 'display_ros_standard', pricing_option_id: 'display_ros_cpc', budget: 1000 }],
});
const ALL_TASKS: Task[] = [
  { name: 'get_proto_capabilities', kind: 'read', args: () => ({}) },
  {
    name: 'get_signals',
    kind: 'read',
    args: () => ({
      signal_spec: 'sports fans streaming live games',
      deliver_to: { deployments: [{ type: 'platform', platform: 'the-trade-desk' }], countries: ['US'] },
      max_results: 5,
    }),
  },
  {
    name: 'get_products',
    kind: 'read',
    args: () => ({ buying_mode: 'brief', brief: 'premium sports video on connected TV in the US', pagination: { max_results: 5 } }),
  },
  { name: 'list_creative_formats', label: 'list_creative_formats (all 78)', kind: 'read', args: () => ({}) },
  {
    name: 'preview_creative',
    label: 'preview_creative batch of 10',
    kind: 'read',
    args: () => ({ request_type: 'batch', requests: Array.from({ length: 10 }, (_, i) => ({ creative_manifest: nativeManifest(i) })) }),
  },
  { name: 'list_accounts', kind: 'read', args: () => ({}) },
  { name: 'get_media_buys', kind: 'read', args: (s) => ({ account: { account_id: s.account }, media_buy_ids: [s.buy] }) },
  { name: 'get_media_buy_delivery', kind: 'read', args: (s) => ({ account: { account_id: s.account }, media_buy_ids: [s.buy] }) },
  { name: 'list_creatives', kind: 'read', args: (s) => ({ account: { account_id: s.account } }) },
  { name: 'get_plan_audit_logs', kind: 'read', args: () => ({ plan_ids: ['bench'] }) },
  {
    name: 'activate_signal',
    kind: 'write',
    args: (_s, u) => ({
      signal_agent_segment_id: 'sig_auto_intenders_suv',
      deployments: [{ type: 'agent', agent_url: `https://sales-${u}.bench.example/mcp` }],
      idempotency_key: u,
    }),
  },
  { name: 'create_media_buy', kind: 'write', args: buyArgs },
  {
    name: 'update_media_buy',
    kind: 'write',
    args: (s, u) => ({
      idempotency_key: u,
      account: { account_id: s.account },
      media_buy_id: s.buy,
      packages: [{ package_id: s.pkg, budget: 1000 + (parseInt(u.slice(0, 4), 16) % 500) }],
    }),
  },
  {
    name: 'sync_accounts',
    kind: 'write',
    args: (_s, u) => ({ idempotency_key: u, accounts: [{ brand: { domain: `b${u.slice(0, 8)}.example` }, operator: `o${u}.example`, billing: 'operator' }] }),
  },
  {
    name: 'sync_creatives',
    kind: 'write',
    args: (s, u) => ({
      idempotency_key: u,
      account: { account_id: s.account },
      creatives: [{ creative_id: `cr_${u}`, name: 'Bench native', ...nativeManifest(1) }],
    }),
  },
  {
    name: 'log_event',
    label: 'log_event (100 events)',
    kind: 'write',
    args: (_s, u) => ({
      idempotency_key: u,
      event_source_id: 'web',
      events: Array.from({ length: 100 }, (_, j) => ({
        event_id: `${u}-${j}`,
        event_type: 'purchase',
        // An hour ago: within the 90 days an event is accepted for (a fixed date went stale and every event was refused).
        event_time: EVENT_TIME,
        custom_data: { value: 10, currency: 'USD' },
      })),
    }),
  },
  {
    name: 'sync_plans',
    kind: 'write',
    args: (_s, u) => ({
      idempotency_key: u,
      plans: [
        {
          plan_id: `plan-${u}`,
          brand: { domain: 'bench.example' },
          objectives: 'bench',
          budget: { total: 1e6, currency: 'USD', reallocation_unlimited: true },
          flight: { start: '2000-01-01T00:00:00Z', end: END },
        },
      ],
    }),
  },
  {
    name: 'check_governance',
    kind: 'write',
    args: (_s, u) => ({
      plan_id: 'bench',
      caller: 'https://seller.bench.example/mcp',
      tool: 'create_media_buy',
      payload: { idempotency_key: u, total_budget: 100, start_time: '2026-01-01T00:00:00Z', end_time: '2026-02-01T00:00:00Z' },
    }),
  },
];
const TASKS = ALL_TASKS.filter((t) => !ONLY || ONLY.includes(t.name));

// ---- Measuring.
interface Measured {
  rps: number;
  latencies: number[];
}
async function measure(once: () => Promise<void>, seconds = SECONDS): Promise<Measured> {
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await once();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { rps: Math.round(latencies.length / seconds), latencies };
}
async function post(url: string, body: string): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url}: status ${res.status}: ${text.slice(0, 300)}`);
  return text;
}
/** The tool's answer, failing on an error answer. */
function checked(name: string, text: string): string {
  // partial_failures: an answer that refused some of its input measures the refusal, not the task.
  if (text.includes('"isError":true') || text.includes('"error":{') || /\\"status\\":\\"failed\\"/.test(text) || text.includes('partial_failures'))
    throw new Error(`${name} failed: ${text.slice(0, 400)}`);
  return text;
}

interface Row {
  storage: string;
  task: string;
  kind: 'read' | 'write';
  rps: number;
  p50_ms: number;
  p95_ms: number;
  baseline_rps: number;
  ratio: number;
  /** CPU time of the agents' server per call over its rounds (load from other processes does not count). */
  cpu_us_per_call: number;
  round_ratios: number[];
  baseline: string;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const quantile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))]! * 100) / 100;
};

async function runStorage(
  storage: 'postgres' | 'pglite',
  build = 'current',
  dir = import.meta.dir,
): Promise<{ rows: Row[]; rss: number; settled: number; shrunk: number }> {
  const schema = `bench_table_${process.pid}`;
  const server = await start({ BENCH_STORAGE: storage, BENCH_SCHEMA: schema, IDLE_COLLECT_MS: String(IDLE_MS), IDLE_SHRINK_MS: String(SHRINK_MS) }, dir);
  const mcp = `${server.url}/mcp`;
  const call = async (name: string, args: unknown) => checked(name, await post(mcp, rpc(name, args)));
  const structured = (text: string) => JSON.parse(/"structuredContent":(\{.*\})\},"jsonrpc"/.exec(text)?.[1] ?? '{}');
  // Setup: an account, a plan, event source, a buy with one package, a creative.
  const setupText: string[] = [];
  const keepCall = async (name: string, args: unknown) => {
    const t = await call(name, args);
    setupText.push(t);
    return structured(t);
  };
  const account = (
    await keepCall('sync_accounts', {
      idempotency_key: fresh(),
      accounts: [{ brand: { domain: 'bench.example' }, operator: 'bench.example', billing: 'operator' }],
    })
  ).accounts[0].account_id as string;
  await keepCall('sync_plans', {
    idempotency_key: fresh(),
    plans: [
      {
        plan_id: 'bench',
        brand: { domain: 'bench.example' },
        objectives: 'bench',
        budget: { total: 1e11, currency: 'USD', reallocation_unlimited: true },
        flight: { start: '2000-01-01T00:00:00Z', end: END },
      },
    ],
  });
  await keepCall('sync_event_sources', { idempotency_key: fresh(), account: { account_id: account }, event_sources: [{ event_source_id: 'web' }] });
  const bought = await keepCall('create_media_buy', buyArgs({ account, buy: '', pkg: '' }, fresh()));
  const setup: Setup = { account, buy: bought.media_buy_id, pkg: bought.packages[0].package_id };
  const setupIds = new Set<string>();
  for (const t of setupText) for (const id of t.match(ID) ?? []) setupIds.add(id.replaceAll('-', ''));

  // Reads: the answers' bytes for the raw baseline.
  const bodies = mkdtempSync(join(tmpdir(), 'bench-table-'));
  for (const task of TASKS.filter((t) => t.kind === 'read')) writeFileSync(join(bodies, task.name), await call(task.name, task.args(setup, fresh())));
  const baseline = await start({ BENCH_TARGET: 'baseline', BENCH_BODIES: bodies, MEMORY_BUDGET_MB: '0' });
  const sql =
    storage === 'postgres' ? postgres(process.env.DATABASE_URL!, { max: 10, onnotice: () => {}, connection: { search_path: `${schema},public` } }) : null;

  const rows: Row[] = [];
  for (const task of TASKS) {
    const label = task.label ?? task.name;
    const agentOnce = async () => void checked(task.name, await post(mcp, rpc(task.name, task.args(setup, fresh()))));
    let baseOnce: () => Promise<void>;
    let baseName: string;
    if (task.kind === 'read') {
      const body = rpc(task.name, task.args(setup, fresh()));
      baseOnce = async () => void (await post(`${baseline.url}/${task.name}`, body));
      baseName = 'raw Bun.serve, same bytes';
    } else {
      for (let i = 0; i < 5; i++) await agentOnce();
      // Two calls recorded: ids in both (the principal, the plan, the buy...) are existing rows and stay.
      const recordOne = async () => {
        await fetch(`${server.control}/record`, { method: 'POST' });
        await agentOnce();
        return (await (await fetch(`${server.control}/recorded`)).json()) as Statement[];
      };
      const ids = (ss: Statement[]) =>
        new Set(
          JSON.stringify(ss)
            .match(ID)
            ?.map((id) => id.replaceAll('-', '')),
        );
      const first = ids(await recordOne());
      const statements = await recordOne();
      if (statements.length === 0) throw new Error(`${task.name}: no writes recorded`);
      const keep = new Set([...setupIds, ...[...ids(statements)].filter((id) => first.has(id))]);
      if (sql) {
        baseOnce = () =>
          sql.begin(async (tx) => {
            for (const s of renew(statements, keep)) await tx.unsafe(s.text, s.values as any[], { prepare: true });
          }) as Promise<any>;
        baseName = `raw SQL, ${statements.length} statements (postgres.js)`;
      } else {
        const replay = JSON.stringify({ statements, keep: [...keep] });
        baseOnce = async () => {
          const res = await fetch(`${server.control}/replay`, { method: 'POST', body: replay });
          if (res.status !== 200) throw new Error(`replay of ${task.name}: ${await res.text()}`);
        };
        baseName = `raw SQL, ${statements.length} statements (in process)`;
      }
    }
    // Warm-up of both, then alternating rounds. Under load too: the engine compiles a task's hot code
    // to its optimizing tiers over thousands of calls, on a thread whose CPU counts as the server's, and a
    // serving process measured in its first seconds is measured compiling.
    for (let i = 0; i < 20; i++) {
      await agentOnce();
      await baseOnce();
    }
    if (WARM_SECONDS > 0) {
      await measure(agentOnce, WARM_SECONDS);
      await measure(baseOnce, WARM_SECONDS);
    }
    const base: Measured[] = [];
    const agent: Measured[] = [];
    let cpu = 0;
    for (let r = 0; r < ROUNDS; r++) {
      base.push(await measure(baseOnce));
      const before = cpuMs(server.proc.pid);
      agent.push(await measure(agentOnce));
      cpu += cpuMs(server.proc.pid) - before;
    }
    const ratios = agent.map((a, i) => a.rps / base[i]!.rps);
    const all = agent.flatMap((a) => a.latencies);
    const row: Row = {
      storage,
      task: label,
      kind: task.kind,
      rps: median(agent.map((a) => a.rps)),
      p50_ms: quantile(all, 0.5),
      p95_ms: quantile(all, 0.95),
      baseline_rps: median(base.map((b) => b.rps)),
      ratio: Math.round(median(ratios) * 1000) / 1000,
      cpu_us_per_call: Math.round((cpu * 1000) / all.length),
      round_ratios: ratios.map((x) => Math.round(x * 100) / 100),
      baseline: baseName,
    };
    rows.push(row);
    log(
      `  ${storage}${build === 'current' ? '' : ` [${build}]`} ${label}: ${row.rps}/s = ${row.ratio}x (${row.round_ratios.join(', ')}), server CPU ${row.cpu_us_per_call} us/call`,
    );
  }
  // At the end of the load, and once the server has been idle a few seconds (it collects after a burst: hosts/idle-collect.ts).
  const rss = rssMb(server.proc.pid);
  await Bun.sleep(SETTLE_MS);
  const settled = rssMb(server.proc.pid);
  await Bun.sleep(SHRINK_SETTLE_MS);
  const shrunk = rssMb(server.proc.pid);
  await Promise.all([server.stop(), baseline.stop(), sql?.end()]);
  if (storage === 'postgres') {
    const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
  return { rows, rss, settled, shrunk };
}

const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const storages = (process.env.BENCH_STORAGES?.split(',') ?? (process.env.DATABASE_URL ? ['postgres', 'pglite'] : ['pglite'])) as Array<'postgres' | 'pglite'>;
// BENCH_BEFORE=<another checkout>: its agents' server (test/bench/agents-server.ts there) is measured too, after this one, for before/after figures of one run.
const builds: Array<[string, string]> = [['current', import.meta.dir]];
if (process.env.BENCH_BEFORE) builds.push(['before', join(process.env.BENCH_BEFORE, 'test/bench')]);
const results: Array<{ storage: string; build: string; rss_mb: number; rss_settled_mb: number; rss_shrunk_mb: number; rows: Row[] }> = [];
for (const storage of storages) {
  for (const [build, dir] of builds) {
    const { rows, rss, settled, shrunk } = await runStorage(storage, build, dir);
    results.push({ storage: builds.length > 1 ? `${storage}[${build}]` : storage, build, rss_mb: rss, rss_settled_mb: settled, rss_shrunk_mb: shrunk, rows });
  }
}
const loadAfter = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const meta = { concurrency: CONCURRENCY, rounds: ROUNDS, seconds: SECONDS, cores: navigator.hardwareConcurrency, load_before: load, load_after: loadAfter };
const W = builds.length > 1 ? 18 : 9;
if (JSON_OUT) console.log(JSON.stringify({ ...meta, results }, null, 2));
else {
  console.log(
    `\nEvery task over MCP, ${CONCURRENCY} concurrent clients, ${ROUNDS} rounds of ${SECONDS} s alternating with its baseline; ${meta.cores} cores, load average ${load} before, ${loadAfter} after`,
  );
  console.log(
    `${'storage'.padEnd(W)}${'task'.padEnd(30)}${'kind'.padEnd(6)}${'req/s'.padStart(7)}${'p50 ms'.padStart(8)}${'p95 ms'.padStart(8)}${'base/s'.padStart(8)}${'ratio'.padStart(8)}${'cpu us'.padStart(8)}  baseline (round ratios)`,
  );
  for (const { storage, rows, rss_mb, rss_settled_mb, rss_shrunk_mb } of results) {
    for (const r of rows)
      console.log(
        `${storage.padEnd(W)}${r.task.padEnd(30)}${r.kind.padEnd(6)}${String(r.rps).padStart(7)}${r.p50_ms.toFixed(1).padStart(8)}${r.p95_ms.toFixed(1).padStart(8)}${String(r.baseline_rps).padStart(8)}${`${r.ratio.toFixed(2)}x`.padStart(8)}${String(r.cpu_us_per_call).padStart(8)}  ${r.baseline} (${r.round_ratios.join(', ')})`,
      );
    console.log(
      `${storage.padEnd(W)}RSS of the agents' server: ${rss_mb} MB at the end of the load, ${rss_settled_mb} MB ${SETTLE_MS / 1000} s later (garbage collected), ${rss_shrunk_mb} MB ${(SETTLE_MS + SHRINK_SETTLE_MS) / 1000} s later (compiled code dropped)`,
    );
  }
}
process.exit(0);
