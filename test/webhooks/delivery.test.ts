import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { systemClock } from '../../core/ports/clock.ts';
import { Signer } from '../../core/ports/signer.ts';
import { HmacSigner } from '../../core/ports/hmac-signer.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { WebhookOutbox } from '../../core/ports/webhook-outbox.ts';
import { WebhookInbox, type ReceivedWebhook } from '../../core/ports/webhook-inbox.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import signerHmac from '../../plugins/signer-hmac-legacy/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import { createDeliveryWorker } from '../../plugins/webhooks/worker.ts';
import { mcpEnvelope, a2aBody } from '../../plugins/webhooks/envelopes.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { operatorBrandJson } from '../support/operator-brand-json.ts';

const env = { PROTOCOL_NAMESPACE: 'adcp' };
const SECRET = 'q8V2mZ7xK1pL4tR9wB3nC6yF0hJ5sD8g';
const BEARER = 'bearer-token-0123456789';

interface Parties {
  seller: TestServer;
  buyer: TestServer;
  events: ReceivedWebhook[];
  worker: ReturnType<typeof createDeliveryWorker>;
}

forEachDatabase<Parties>(
  'webhook delivery',
  async (adapter, schema) => {
    // The seller (sender): signer, HMAC, SSRF-guarded crawler with loopback allowlisted, outbox without background workers.
    const seller = await startServer(
      adapter,
      `${schema}_s`,
      [
        signerKeyring(),
        signerHmac(),
        // The seller publishes its operator brand.json pointing at its JWKS (normally on the operator's domain).
        operatorBrandJson({ type: 'sales', id: 'seller', domain: 'seller.test', path: '' }),
        crawlerHttp({ allowlist: ['127.0.0.1'] }),
        webhooks({ outbox: { workers: false, allowHttp: true } }),
      ],
      { env },
    );
    const events: ReceivedWebhook[] = [];
    // The buyer resolves the seller's keys through the operator's brand.json -> jwks_uri.
    const buyer = await startServer(
      adapter,
      `${schema}_b`,
      [
        crawlerHttp({ allowlist: ['127.0.0.1'] }),
        signerHmac(),
        webhooks({
          outbox: { workers: false },
          receiver: {
            endpoints: {
              signed: { mode: 'rfc9421' },
              hmac: { mode: 'hmac', sender: 'seller-hmac', secrets: [SECRET] },
              bearer: { mode: 'bearer', sender: 'seller-bearer', token: BEARER },
            },
            senders: [{ id: 'seller', brandJsonUrl: `${seller.base}/.well-known/brand.json`, agentUrl: seller.base }],
            allowHttpKeys: true,
          },
        }),
      ],
      { env },
    );
    buyer.deployment.get(WebhookInbox).subscribe((_tx, e) => void events.push(e));
    const worker = createDeliveryWorker(
      {
        db: seller.deployment.get(Database),
        clock: systemClock,
        crawler: seller.deployment.get(Crawler),
        signer: seller.deployment.get(Signer),
        hmac: seller.deployment.get(HmacSigner),
      },
      { namespace: 'adcp', workerId: 'w1', batchSize: 10, leaseSeconds: 30, timeoutMs: 5000, baseDelaySeconds: 0.01, maxDelaySeconds: 0.02, allowHttp: true },
    );
    return { seller, buyer, events, worker };
  },
  async ({ seller, buyer }) => {
    await seller.close();
    await buyer.close();
  },
  (get) => {
    const enqueue = async (p: Parties, path: string, auth: any, body: Record<string, unknown>, rollback = false) => {
      const db = p.seller.deployment.get(Database);
      const outbox = p.seller.deployment.get(WebhookOutbox);
      let id = '';
      const run = db.transaction(async (tx) => {
        id = await outbox.enqueue(tx, {
          url: `${p.buyer.base}/webhooks/${path}`,
          auth,
          format: 'status' in body && typeof body.status === 'object' ? 'a2a' : 'mcp',
          idempotencyKey: String((body as any).idempotency_key ?? (body as any).metadata?.idempotency_key),
          body: JSON.stringify(body),
          taskId: 't1',
          operationId: 'op-1',
        });
        if (rollback) throw new Error('status change rolled back');
      });
      if (rollback) await expect(run).rejects.toThrow('rolled back');
      else await run;
      return id;
    };
    const drain = async (p: Parties) => {
      for (let i = 0; i < 20 && (await p.worker.runOnce()) > 0; i++);
    };
    const change = (status: any, key: string) =>
      mcpEnvelope(
        { taskId: 't1', taskType: 'create_media_buy', status, timestamp: new Date(), message: 'm', result: { media_buy_id: 'mb_1' } },
        { operationId: 'op-1', context: { trace: 'c1' } },
        key,
      );

    test('RFC 9421: delivered once, verified via brand.json -> jwks_uri, attempts recorded; a rolled-back change sends nothing', async () => {
      const p = get();
      const before = p.events.length;
      await enqueue(p, 'signed', { mode: 'rfc9421' }, change('working', 'whk_rollback_000001'), true);
      const id = await enqueue(p, 'signed', { mode: 'rfc9421' }, change('working', 'whk_signed_0000001'));
      await drain(p);
      const db = p.seller.deployment.get(Database);
      const [row] = await db.query<any>(sql`SELECT status, attempts FROM webhook_outbox WHERE id = ${id}::uuid`);
      const attempts = await db.query<any>(
        sql`SELECT status, http_status_code, attempt, error_message FROM webhook_delivery_attempts WHERE outbox_id = ${id}::uuid`,
      );
      expect(attempts.at(-1)).toMatchObject({ status: 'success', http_status_code: 200 });
      expect(row).toMatchObject({ status: 'delivered' });
      const mine = p.events.slice(before);
      expect(mine.map((e) => e.idempotencyKey)).toEqual(['whk_signed_0000001']);
      expect(mine[0]).toMatchObject({ sender: 'seller', format: 'mcp', endpoint: 'signed' });
      expect(mine[0]!.payload).toMatchObject({ operation_id: 'op-1', status: 'working', context: { trace: 'c1' }, task_type: 'create_media_buy' });
      const [none] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_outbox WHERE idempotency_key = 'whk_rollback_000001'`);
      expect(none!.n).toBe(0);
    }, 30_000);

    test('a resent event is a duplicate answered 200 and not handed to handlers again; A2A bodies are detected', async () => {
      const p = get();
      const before = p.events.length;
      await enqueue(p, 'signed', { mode: 'rfc9421' }, change('completed', 'whk_dup_000000001'));
      await enqueue(p, 'signed', { mode: 'rfc9421' }, change('completed', 'whk_dup_000000001'));
      await enqueue(
        p,
        'signed',
        { mode: 'rfc9421' },
        a2aBody({ taskId: 't2', taskType: 'x', status: 'completed', timestamp: new Date(), result: { ok: true } }, 'whk_a2a_000000001'),
      );
      await drain(p);
      const mine = p.events.slice(before);
      // No ordering guarantee between webhooks (concurrent delivery): compare sorted.
      expect(mine.map((e) => [e.idempotencyKey, e.format]).sort()).toEqual([
        ['whk_a2a_000000001', 'a2a'],
        ['whk_dup_000000001', 'mcp'],
      ]);
      const [delivered] = await p.seller.deployment
        .get(Database)
        .query<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_outbox WHERE idempotency_key = 'whk_dup_000000001' AND status = 'delivered'`);
      expect(delivered!.n).toBe(2); // both answered 2xx (the second as a duplicate)
    }, 30_000);

    test('legacy HMAC and Bearer by registration; a mode mismatch is 401 webhook_mode_mismatch and retried (transient)', async () => {
      const p = get();
      const before = p.events.length;
      await enqueue(p, 'hmac', { mode: 'hmac', secret: SECRET }, change('working', 'whk_hmac_00000001'));
      await enqueue(p, 'bearer', { mode: 'bearer', token: BEARER }, change('working', 'whk_bearer_000001'));
      const mismatched = await enqueue(p, 'hmac', { mode: 'rfc9421' }, change('working', 'whk_mismatch_0001'));
      await p.worker.runOnce();
      expect(p.events.slice(before).map((e) => [e.idempotencyKey, e.sender])).toEqual(
        expect.arrayContaining([
          ['whk_hmac_00000001', 'seller-hmac'],
          ['whk_bearer_000001', 'seller-bearer'],
        ]),
      );
      const db = p.seller.deployment.get(Database);
      const [a] = await db.query<any>(
        sql`SELECT status, http_status_code FROM webhook_delivery_attempts WHERE outbox_id = ${mismatched}::uuid AND attempt = 1`,
      );
      expect(a).toMatchObject({ status: 'failed', http_status_code: 401 });
      const [row] = await db.query<any>(sql`SELECT status FROM webhook_outbox WHERE id = ${mismatched}::uuid`);
      expect(row.status).toBe('pending');
      const res = await fetch(`${p.buyer.base}/webhooks/signed`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-adcp-signature': 'sha256=00', 'x-adcp-timestamp': '1' },
        body: '{}',
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Signature error="webhook_mode_mismatch"');
    }, 30_000);

    test('registration checks: Bearer refused for mutating callbacks, short HMAC secrets refused', async () => {
      const p = get();
      const outbox = p.seller.deployment.get(WebhookOutbox);
      const db = p.seller.deployment.get(Database);
      const base = { url: 'https://buyer.example/h', format: 'mcp' as const, idempotencyKey: 'whk_reg_000000001', body: '{}' };
      await expect(db.transaction((tx) => outbox.enqueue(tx, { ...base, auth: { mode: 'bearer', token: BEARER }, mutating: true }))).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
      });
      await expect(db.transaction((tx) => outbox.enqueue(tx, { ...base, auth: { mode: 'hmac', secret: 'short' } }))).rejects.toMatchObject({
        code: 'INVALID_REQUEST',
      });
    });

    test('receiver endpoint: 415 for non-JSON and 413 over 1 MB before verifying; unknown endpoint 404', async () => {
      const p = get();
      const r1 = await fetch(`${p.buyer.base}/webhooks/signed`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
      expect(r1.status).toBe(415);
      const r2 = await fetch(`${p.buyer.base}/webhooks/signed`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: 'x'.repeat(1024 * 1024 + 10),
      });
      expect(r2.status).toBe(413);
      const r3 = await fetch(`${p.buyer.base}/webhooks/nope`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(r3.status).toBe(404);
      const r4 = await fetch(`${p.buyer.base}/webhooks/signed`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(r4.status).toBe(401);
      expect(r4.headers.get('www-authenticate')).toBe('Signature error="webhook_signature_header_malformed"');
    });
  },
);
