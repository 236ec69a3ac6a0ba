import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { Signer } from '../../core/ports/signer.ts';
import { systemClock } from '../../core/ports/clock.ts';
import { WebhookOutbox } from '../../core/ports/webhook-outbox.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import { createWebhookVerifier } from '../../lib/rfc9421/verify.ts';
import { createReplayStore } from '../../plugins/webhooks/receiver-stores.ts';
import { createWebhookReceiver, toResponse } from '../../plugins/webhooks/receiver.ts';
import { mcpEnvelope } from '../../plugins/webhooks/envelopes.ts';
import { DATABASE_URL, describePostgres, dropSchema, uniqueSchema } from '../support/db.ts';
import { startServer } from '../support/server.ts';

const N = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Two processes share the outbox, so this needs Postgres (an in-memory PGlite lives in one process).
describePostgres('webhook delivery under faults [postgres] (flaky receiver, sender SIGKILLed and restarted)', () => {
  test('every webhook is delivered, none lost, duplicates deduped by the receiver', async () => {
    const senderSchema = uniqueSchema('fault_s');
    const receiverSchema = uniqueSchema('fault_r');
    const env = { PROTOCOL_NAMESPACE: 'adcp' };
    // Seller side in this process: migrations, the persisted signing key, and the enqueue API (no workers here).
    const seller = await startServer('postgres', senderSchema, [signerKeyring(), webhooks({ outbox: { workers: false } })], { env });
    // Buyer side: its own schema for the replay cache and dedup state.
    const buyer = await startServer('postgres', receiverSchema, [webhooks({ outbox: { workers: false } })], { env });
    const children: ReturnType<typeof Bun.spawn>[] = [];
    let server: ReturnType<typeof Bun.serve> | null = null;
    try {
      const signer = seller.deployment.get(Signer);
      const buyerDb = buyer.deployment.get(Database);
      const verifier = createWebhookVerifier({
        namespace: 'adcp',
        keys: { resolve: async (kid) => signer.jwks().keys.find((k) => k.kid === kid) ?? null },
        replay: createReplayStore(buyerDb),
        clock: systemClock,
      });
      const receiver = createWebhookReceiver({ db: buyerDb, clock: systemClock, verifier }, { namespace: 'adcp' });

      const handled = new Map<string, number>();
      const stats = { requests: 0, failed500: 0, slow: 0, duplicates: 0, refusedWindow: false };
      let port = 0;
      let downUntilRequest = 12; // after this many requests, refuse connections for a while
      const handler = async (request: Request): Promise<Response> => {
        const n = ++stats.requests;
        if (n === downUntilRequest) {
          downUntilRequest = -1;
          stats.refusedWindow = true;
          setTimeout(async () => {
            server?.stop(true);
            await sleep(1500);
            server = Bun.serve({ port, hostname: '127.0.0.1', fetch: handler });
          }, 0);
        }
        if (n % 7 === 1) {
          stats.failed500++;
          return new Response('boom', { status: 500 });
        }
        if (n % 7 === 3) {
          stats.slow++;
          await sleep(1500); // past the sender's 1 s timeout: processed here, retried there
        } else await sleep(50);
        const body = new Uint8Array(await request.arrayBuffer());
        const result = await receiver.receive(
          { method: request.method, url: request.url, headers: request.headers, body },
          { mode: 'rfc9421' },
          'fault',
          async (_tx, e) => {
            handled.set(e.idempotencyKey, (handled.get(e.idempotencyKey) ?? 0) + 1);
          },
        );
        if (result.duplicate) stats.duplicates++;
        return toResponse(result);
      };
      server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handler });
      port = server.port!;

      const sellerDb = seller.deployment.get(Database);
      const outbox = seller.deployment.get(WebhookOutbox);
      const keys: string[] = [];
      for (let i = 0; i < N; i++) {
        const key = `whk_fault_${String(i).padStart(6, '0')}`;
        keys.push(key);
        await sellerDb.transaction((tx) =>
          outbox.enqueue(tx, {
            url: `http://127.0.0.1:${port}/hooks/fault?i=${i}`,
            auth: { mode: 'rfc9421' },
            format: 'mcp',
            idempotencyKey: key,
            taskId: `t${i}`,
            operationId: `op-${i}`,
            body: JSON.stringify(
              mcpEnvelope({ taskId: `t${i}`, taskType: 'create_media_buy', status: 'working', timestamp: new Date() }, { operationId: `op-${i}` }, key),
            ),
          }),
        );
      }

      const spawnSender = () => {
        const child = Bun.spawn(['bun', join(import.meta.dir, 'support/fault-sender.ts')], {
          env: { ...process.env, DATABASE_URL: DATABASE_URL!, FAULT_SCHEMA: senderSchema, LOG_LEVEL: 'silent' },
          stdout: 'ignore',
          stderr: 'inherit',
        });
        children.push(child);
        return child;
      };
      const first = spawnSender();
      // Kill the sender once some webhooks got through and others are in flight.
      let firstExit: number | null = null;
      void first.exited.then((code) => (firstExit = code));
      const killBy = Date.now() + 60_000;
      while (handled.size < 8 && firstExit === null && Date.now() < killBy) await sleep(20);
      expect(firstExit).toBeNull(); // the sender was running (it did not crash on its own)
      first.kill('SIGKILL');
      await first.exited;
      const killedAt = stats.requests;
      await sleep(300);
      spawnSender();

      // Wait (bounded) until the outbox says everything was delivered.
      const deadline = Date.now() + 90_000;
      let pending = N;
      while (Date.now() < deadline) {
        const [row] = await sellerDb.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_outbox WHERE status <> 'delivered'`);
        pending = row!.n;
        if (pending === 0) break;
        await sleep(100);
      }
      expect(pending).toBe(0);
      expect(killedAt).toBeGreaterThan(0);
      // Every event handled exactly once, none lost.
      expect([...handled.keys()].sort()).toEqual(keys);
      expect([...handled.values()].every((n) => n === 1)).toBe(true);
      // The faults really happened and were recorded per attempt.
      expect(stats.failed500).toBeGreaterThan(0);
      expect(stats.slow).toBeGreaterThan(0);
      expect(stats.refusedWindow).toBe(true);
      expect(stats.duplicates).toBeGreaterThan(0); // the slow ones were processed, then retried
      const byStatus = await sellerDb.query<{ status: string; n: number }>(
        sql`SELECT status, count(*)::int AS n FROM webhook_delivery_attempts GROUP BY status ORDER BY status`,
      );
      const counts = Object.fromEntries(byStatus.map((r) => [r.status, r.n]));
      expect(counts.success).toBeGreaterThanOrEqual(N);
      expect(counts.failed).toBeGreaterThan(0);
      expect(counts.timeout).toBeGreaterThan(0);
      expect(counts.pending ?? 0).toBe(0);
      const [five] = await sellerDb.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE http_status_code = 500`);
      expect(five!.n).toBe(stats.failed500);
      console.log('fault test', { ...stats, attempts: counts });
    } finally {
      for (const c of children) c.kill('SIGKILL');
      server?.stop(true);
      await seller.close();
      await buyer.close();
      await dropSchema('postgres', senderSchema);
      await dropSchema('postgres', receiverSchema);
    }
  }, 120_000);
});
