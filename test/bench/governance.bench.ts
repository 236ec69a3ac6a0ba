/**
 * Governance on the buy path, each figure beside a baseline measured in the same run:
 * - create_media_buy over REST with a plan_id (the seller asks check_governance in the same
 *   deployment, writes the buy, reports the outcome) against the same buy without a plan;
 * - log_event with 100 conversion events a call (deduplication, attribution in the simulated ad
 *   server) against the same call re-sent (every event a duplicate: the dedup path alone).
 * Postgres when DATABASE_URL is set, else PGlite.
 */
import { join } from 'node:path';
import { spawnServer } from './harness.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const HEADERS = { 'content-type': 'application/json', authorization: 'Bearer bench-token-0123456789abcdef' };

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
const fmt = (r: { rps: number; p50: number; p95: number }) =>
  `${String(r.rps).padStart(6)} /s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p95 ${r.p95.toFixed(1).padStart(6)} ms`;

const storage = process.env.DATABASE_URL ? 'postgres' : 'pglite';
console.log(`governance on ${storage}, ${CONCURRENCY} concurrent clients, ${SECONDS} s per run`);
const server = await spawnServer(join(import.meta.dir, 'governance-server.ts'), [], {
  BENCH_STORAGE: storage,
  BENCH_SCHEMA: `bench_governance_${process.pid}`,
});
const base = `http://127.0.0.1:${server.port}`;
const call = async (task: string, args: Record<string, unknown>) => {
  const res = await fetch(`${base}/tasks/${task}`, { method: 'POST', headers: HEADERS, body: JSON.stringify(args) });
  const body = (await res.json()) as Record<string, any>;
  if (res.status !== 200) throw new Error(`${task}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
};
try {
  const run = process.pid;
  await call('sync_plans', {
    idempotency_key: `bench-plans-${run}-000001`,
    plans: [
      {
        plan_id: 'bench',
        brand: { domain: 'bench.example' },
        objectives: 'bench',
        budget: { total: 1e11, currency: 'USD', reallocation_unlimited: true },
        flight: { start: '2000-01-01T00:00:00Z', end: '2100-01-01T00:00:00Z' },
      },
    ],
  });
  const account = (
    await call('sync_accounts', {
      idempotency_key: `bench-acc-${run}-000001`,
      accounts: [{ brand: { domain: 'bench.example' }, operator: 'bench.example', billing: 'operator' }],
    })
  ).accounts[0].account_id;
  const end = new Date(Date.now() + 7 * 86_400_000).toISOString();
  const order = (key: string, plan: boolean) => ({
    idempotency_key: key,
    ...(plan ? { plan_id: 'bench' } : {}),
    account: { account_id: account },
    start_time: 'asap',
    end_time: end,
    packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000 }],
  });
  const plain = await measure((i) => call('create_media_buy', order(`bench-plain-${run}-${i}`, false)).then(() => {}));
  const governed = await measure((i) =>
    call('create_media_buy', order(`bench-gov-${run}-${i}`, true)).then(
      (b) =>
        void (
          b.governance?.status === 'approved' ||
          (() => {
            throw new Error('not governed');
          })()
        ),
    ),
  );
  console.log(`create_media_buy without a plan   ${fmt(plain)}`);
  console.log(`create_media_buy with a plan_id   ${fmt(governed)}  = ${((governed.rps / plain.rps) * 100).toFixed(1)}% of the ungoverned rate`);

  await call('sync_event_sources', {
    idempotency_key: `bench-src-${run}-000001`,
    account: { account_id: account },
    event_sources: [{ event_source_id: 'web' }],
  });
  const events = (i: number) =>
    Array.from({ length: 100 }, (_, j) => ({
      event_id: `e-${i}-${j}`,
      event_type: 'purchase',
      event_time: new Date().toISOString(),
      custom_data: { value: 10, currency: 'USD' },
    }));
  const fresh = await measure((i) => call('log_event', { idempotency_key: `bench-evt-${run}-${i}`, event_source_id: 'web', events: events(i) }).then(() => {}));
  const dupes = await measure((i) =>
    call('log_event', { idempotency_key: `bench-dup-${run}-${i}`, event_source_id: 'web', events: events(i % 30) }).then(() => {}),
  );
  console.log(`log_event, 100 duplicates a call  ${fmt(dupes)}  (${dupes.rps * 100} events/s)`);
  console.log(
    `log_event, 100 new events a call  ${fmt(fresh)}  (${fresh.rps * 100} events/s) = ${((fresh.rps / dupes.rps) * 100).toFixed(1)}% of the dedup-only rate`,
  );
} finally {
  await server.stop();
}
