/**
 * Webhook signing: sign+digest and verify ops/s (Ed25519, P-256) beside raw WebCrypto sign/verify
 * of the same signature base in the same run; then outbox delivery throughput to a loopback
 * receiver (separate process) beside raw fetch POSTs to it.
 */
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { generatePrivateJwk, signingKeyFrom, verifyKeyFrom, verifyRaw } from '../../lib/signer/keys.ts';
import { signWebhook } from '../../lib/rfc9421/sign.ts';
import { createWebhookVerifier } from '../../lib/rfc9421/verify.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { createOutbox } from '../../plugins/webhooks/outbox.ts';
import { createDeliveryWorker } from '../../plugins/webhooks/worker.ts';
import { createPgliteDatabase } from '../../plugins/storage-pglite/index.ts';
import { createPostgresDatabase } from '../../plugins/storage-postgres/index.ts';
import { HttpCrawler } from '../../plugins/crawler-http/index.ts';
import { systemClock } from '../../core/ports/clock.ts';
import { sql } from '../../core/sql.ts';
import { defaultIds } from '../../core/ports/ids.ts';
import type { SignatureAlg } from '../../core/ports/signer.ts';

const enc = new TextEncoder();
const body = enc.encode(
  JSON.stringify({
    idempotency_key: crypto.randomUUID(),
    task_id: 'task_456',
    operation_id: 'op_abc',
    task_type: 'create_media_buy',
    status: 'completed',
    timestamp: new Date().toISOString(),
    result: { media_buy_id: 'mb_001', packages: [{ package_id: 'p1' }] },
  }),
);
const url = 'https://buyer.example.com/adcp/webhook/create_media_buy/op_abc';

async function opsPerSecond(fn: () => Promise<unknown>, ms = 1200): Promise<number> {
  for (let i = 0; i < 50; i++) await fn(); // warm-up
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    await fn();
    n++;
  }
  return n / ((performance.now() - start) / 1000);
}
const fmt = (x: number) => x.toFixed(0).padStart(8);

console.log('sign/verify (ops/s)            ours      raw   ours/raw');
for (const alg of ['ed25519', 'ecdsa-p256-sha256'] as SignatureAlg[]) {
  const jwk = await generatePrivateJwk(alg);
  const key = await signingKeyFrom(jwk, 'bench', alg, 'adcp');
  const pub = await verifyKeyFrom(key.publicJwk, alg);
  const headers = await signWebhook({ key, namespace: 'adcp', url, body, now: new Date() });
  const base = enc.encode(
    `"@method": POST\n"@target-uri": ${url}\n"@authority": buyer.example.com\n"content-type": application/json\n"content-digest": ${headers['Content-Digest']}\n"@signature-params": ${headers['Signature-Input']!.slice(5)}`,
  );
  const rawSig = await key.sign(base);
  const ourSign = await opsPerSecond(() => signWebhook({ key, namespace: 'adcp', url, body, now: new Date() }));
  const rawSign = await opsPerSecond(() => key.sign(base));
  // Verify: fresh signatures (each nonce is accepted once); the replay store is in memory so the figure is the verifier's own cost.
  const signed = await Promise.all(Array.from({ length: 4000 }, () => signWebhook({ key, namespace: 'adcp', url, body, now: new Date() })));
  let i = 0;
  const verify = createWebhookVerifier({
    namespace: 'adcp',
    keys: { resolve: async () => key.publicJwk },
    replay: { count: async () => 0, record: async () => true },
    clock: systemClock,
  });
  const ourVerify = await opsPerSecond(async () => {
    const r = await verify({ method: 'POST', url, headers: new Headers(signed[i++ % signed.length]), body });
    if (!r.ok) throw new Error(r.code);
  });
  const rawVerify = await opsPerSecond(() => verifyRaw(pub, alg, rawSig, base));
  console.log(`${alg.padEnd(18)} sign+digest ${fmt(ourSign)} ${fmt(rawSign)}   ${(ourSign / rawSign).toFixed(2)}`);
  console.log(`${alg.padEnd(18)} verify      ${fmt(ourVerify)} ${fmt(rawVerify)}   ${(ourVerify / rawVerify).toFixed(2)}`);
}

// Outbox delivery throughput to a loopback receiver in its own process.
const receiver = Bun.spawn(['bun', join(import.meta.dir, 'webhook-receiver.ts')], { stdout: 'pipe', stderr: 'inherit' });
const first = await receiver.stdout.getReader().read();
const port = Number(new TextDecoder().decode(first.value).trim());
const target = `http://127.0.0.1:${port}/hook`;
const N = 1000;
const CONCURRENCY = 32;
try {
  const schema = `bench_wh_${process.pid}`;
  const db = process.env.DATABASE_URL
    ? createPostgresDatabase({ url: process.env.DATABASE_URL, schema, max: 8 })
    : createPgliteDatabase({ dataDir: 'memory://', instance: await PGlite.create('memory://') });
  await db.migrate('webhooks', loadMigrations(join(import.meta.dir, '../../plugins/webhooks/migrations')));
  const key = await signingKeyFrom(await generatePrivateJwk('ed25519'), 'bench', 'ed25519', 'adcp');
  const text = new TextDecoder().decode(body);

  // Baseline: raw signed POSTs with the same concurrency, no database.
  let next = 0;
  const rawStart = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < N) {
        const headers = await signWebhook({ key, namespace: 'adcp', url: target, body, now: new Date() });
        const res = await fetch(target, { method: 'POST', headers, body });
        await res.arrayBuffer();
      }
    }),
  );
  const rawRate = N / ((performance.now() - rawStart) / 1000);

  const outbox = createOutbox({ ids: defaultIds, clock: systemClock }, { horizonSeconds: 3600 });
  await db.transaction(async (tx) => {
    for (let i = 0; i < N; i++) {
      await outbox.enqueue(tx, { url: target, auth: { mode: 'rfc9421' }, format: 'mcp', idempotencyKey: `whk_bench_${i}_${crypto.randomUUID()}`, body: text });
    }
  });
  const worker = createDeliveryWorker(
    {
      db,
      clock: systemClock,
      crawler: new HttpCrawler({ allowlist: ['127.0.0.1'] }),
      signer: { active: () => key, jwks: () => ({ keys: [] }), revocations: () => ({ keyids: [], updatedAt: new Date() }) },
    },
    {
      namespace: 'adcp',
      workerId: 'bench',
      batchSize: CONCURRENCY,
      leaseSeconds: 60,
      timeoutMs: 10_000,
      baseDelaySeconds: 1,
      maxDelaySeconds: 10,
      allowHttp: true,
    },
  );
  const start = performance.now();
  let sent = 0;
  while (sent < N) {
    const n = await worker.runOnce();
    if (n === 0) break;
    sent += n;
  }
  const rate = sent / ((performance.now() - start) / 1000);
  const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_outbox WHERE status = 'delivered'`);
  console.log(`\noutbox delivery (${db.kind}, ${N} webhooks, batch ${CONCURRENCY}): ${rate.toFixed(0)} webhooks/s delivered=${row?.n}`);
  console.log(`raw signed fetch POSTs (same concurrency, no DB): ${rawRate.toFixed(0)}/s   outbox/raw ${(rate / rawRate).toFixed(2)}`);
  if (process.env.DATABASE_URL) await db.query(sql`DROP SCHEMA ${sql.raw(`"${schema}"`)} CASCADE`);
  await db.close();
} finally {
  receiver.kill();
}
process.exit(0);
