/**
 * The sales agent under load, each figure beside a baseline measured in the same run:
 * - get_products over MCP (brief ranking, forecasts) against a raw Bun.serve answering the same bytes;
 * - create_media_buy over REST (validation, idempotency claim, catalog lookup, booking on the
 *   simulated ad server, buy + package + history rows) against the raw SQL of the same writes in one
 *   transaction, from the same number of concurrent clients.
 * Postgres when DATABASE_URL is set (the raw SQL baseline needs it); otherwise PGlite, without that baseline.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const TOKEN = 'bench-token-0123456789abcdef';
const SCHEMA = `bench_sales_${process.pid}`;
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKEN}` };

async function startServer(env: Record<string, string>) {
  const proc = Bun.spawn(['bun', join(import.meta.dir, 'sales-server.ts')], {
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
  return { proc, port: Number(/READY (\d+)/.exec(out)![1]) };
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Math.round(Number(line.replace(/\D+/g, '')) / 1024);
}

/** `CONCURRENCY` workers doing `op` back to back for SECONDS (after a warm-up of 30 calls). */
async function measure(op: (i: number) => Promise<void>) {
  let n = 0;
  for (let i = 0; i < 30; i++) await op(n++);
  const latencies: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await op(n++);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
  return { rps: Math.round(latencies.length / SECONDS), p50: q(0.5), p95: q(0.95) };
}

const post = async (url: string, body: string, check: (text: string) => void) => {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`status ${res.status}: ${text.slice(0, 300)}`);
  check(text);
};

const fmt = (r: { rps: number; p50: number; p95: number }) =>
  `${String(r.rps).padStart(6)} /s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p95 ${r.p95.toFixed(1).padStart(6)} ms`;
const productsCall = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'get_products',
    arguments: { buying_mode: 'brief', brief: 'premium sports video on connected TV in the US', pagination: { max_results: 5 } },
  },
});

const storage = process.env.DATABASE_URL ? 'postgres' : 'pglite';
console.log(`sales agent on ${storage}, ${CONCURRENCY} concurrent clients, ${SECONDS} s per run`);
const server = await startServer({ BENCH_STORAGE: storage, BENCH_SCHEMA: SCHEMA });
const base = `http://127.0.0.1:${server.port}`;
try {
  // get_products over MCP, beside a raw Bun.serve answering the same bytes.
  const sampleBody = await (await fetch(`${base}/mcp`, { method: 'POST', headers: HEADERS, body: productsCall })).text();
  const raw = await startServer({ BENCH_TARGET: 'baseline', BENCH_BODY: sampleBody });
  const rawResult = await measure(() => post(`http://127.0.0.1:${raw.port}/mcp`, productsCall, () => {}));
  raw.proc.kill();
  await raw.proc.exited;
  const products = await measure(() =>
    post(
      `${base}/mcp`,
      productsCall,
      (t) =>
        void (
          t.includes('ctv_sports_premium') ||
          (() => {
            throw new Error(t.slice(0, 200));
          })()
        ),
    ),
  );
  console.log(`get_products (MCP)             ${fmt(products)}  = ${((products.rps / rawResult.rps) * 100).toFixed(1)}% of raw Bun.serve (${fmt(rawResult)})`);

  // create_media_buy over REST.
  const account = await (
    await fetch(`${base}/tasks/sync_accounts`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({
        idempotency_key: 'bench-accounts-0000001',
        accounts: [{ brand: { domain: 'bench.example' }, operator: 'bench.example', billing: 'operator' }],
      }),
    })
  ).json();
  const accountId = account.accounts[0].account_id as string;
  const end = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const createBody = (i: number) =>
    JSON.stringify({
      idempotency_key: `bench-create-${process.pid}-${String(i).padStart(9, '0')}`,
      account: { account_id: accountId },
      start_time: 'asap',
      end_time: end,
      packages: [{ product_id: 'display_ros_standard', pricing_option_id: 'display_ros_cpc', budget: 1000 }],
    });
  const creates = await measure((i) =>
    post(
      `${base}/tasks/create_media_buy`,
      createBody(i),
      (t) =>
        void (
          t.includes('"media_buy_id"') ||
          (() => {
            throw new Error(t.slice(0, 200));
          })()
        ),
    ),
  );
  const rss = rssMb(server.proc.pid);

  if (storage === 'postgres') {
    // The same writes in one transaction, straight through postgres.js: claim, buy, package, history, order, line, response.
    const sql = postgres(process.env.DATABASE_URL!, { max: 10, onnotice: () => {}, connection: { search_path: SCHEMA } });
    const [acc] = await sql`SELECT owner FROM sales_accounts WHERE account_id = ${accountId}`;
    const owner = acc!.owner as string;
    const rawWrites = await measure(async (i) => {
      const id = `mb_raw_${process.pid}_${i}`;
      const pkg = `pkg_raw_${process.pid}_${i}`;
      const now = new Date();
      await sql.begin(async (tx) => {
        await tx`INSERT INTO idempotency_keys (principal_id, key, task_name, payload_hash, state, claim_id, created_at, claimed_until, expires_at)
          VALUES (${'raw'}, ${id}, 'create_media_buy', 'h', 'in_flight', ${crypto.randomUUID()}, ${now}, ${now}, ${now})`;
        await tx`INSERT INTO sales_media_buys (media_buy_id, owner, account_id, brand_domain, status, revision, currency, total_budget, start_time, end_time, asap, sandbox, confirmed_at, due_at, created_at, updated_at)
          VALUES (${id}, ${owner}, ${accountId}, 'bench.example', 'pending_creatives', 1, 'USD', 1000, ${now}, ${end}, true, false, ${now}, ${end}, ${now}, ${now})`;
        await tx`INSERT INTO sales_packages (package_id, media_buy_id, product_id, pricing_option_id, pricing_model, rate, currency, budget, format_ids, position, created_at)
          VALUES (${pkg}, ${id}, 'display_ros_standard', 'display_ros_cpc', 'cpc', 0.9, 'USD', 1000, ${sql.json([])}, 0, ${now})`;
        await tx`INSERT INTO sales_buy_history (media_buy_id, revision, at, actor, action, summary) VALUES (${id}, 1, ${now}, 'bench', 'created', '1 package')`;
        await tx`INSERT INTO adsim_orders (media_buy_id, owner, start_time, end_time, decision, booked_at, events_through) VALUES (${id}, ${owner}, ${now}, ${end}, 'approved', ${now}, ${now})`;
        await tx`INSERT INTO adsim_lines (media_buy_id, package_id, product_id, budget, pricing_model, rate, currency, ctr) VALUES (${id}, ${pkg}, 'display_ros_standard', 1000, 'cpc', 0.9, 'USD', 0.0018)`;
        await tx`UPDATE idempotency_keys SET state = 'completed', response = ${sql.json({ media_buy_id: id })} WHERE principal_id = ${'raw'} AND key = ${id}`;
      });
    });
    await sql.end();
    console.log(
      `create_media_buy (REST)        ${fmt(creates)}  = ${((creates.rps / rawWrites.rps) * 100).toFixed(1)}% of the raw SQL of its writes (${fmt(rawWrites)})`,
    );
  } else {
    console.log(`create_media_buy (REST)        ${fmt(creates)}  (set DATABASE_URL for the raw SQL baseline)`);
  }
  console.log(`server RSS after load ${rss} MB`);
} finally {
  server.proc.kill();
  await server.proc.exited;
  if (storage === 'postgres') {
    const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await sql.end();
  }
}
