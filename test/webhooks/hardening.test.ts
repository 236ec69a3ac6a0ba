import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { systemClock } from '../../core/ports/clock.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { WebhookOutbox } from '../../core/ports/webhook-outbox.ts';
import type { Logger } from '../../core/log.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import { createDeliveryWorker } from '../../plugins/webhooks/worker.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { tableFingerprint } from '../support/rows.ts';

const BEARER = 'bearer-token-0123456789';

forEachDatabase<{ s: TestServer; schema: string }>(
  'webhook hardening',
  async (adapter, schema) => {
    const s = await startServer(adapter, schema, [
      // The SSRF guard as deployed: no loopback allowlist.
      crawlerHttp(),
      webhooks({ outbox: { workers: false }, receiver: { endpoints: { bearer: { mode: 'bearer', sender: 'seller-bearer', token: BEARER } } } }),
    ]);
    return { s, schema };
  },
  async ({ s }) => s.close(),
  (get) => {
    test('receiver endpoint names of Object.prototype are unknown endpoints: 404 with or without credentials, never 500 or 401', async () => {
      for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'nope']) {
        for (const headers of [{}, { authorization: `Bearer ${BEARER}` }] as Record<string, string>[]) {
          const res = await get().s.fetch(`/webhooks/${name}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
          expect({ name, status: res.status }).toEqual({ name, status: 404 });
        }
      }
    });

    test('a receiver body past 1 MB is 413 while streaming, with or without Content-Length', async () => {
      const big = `{"status":"working","x":"${'y'.repeat(1024 * 1024)}"}`;
      for (const body of [big, new Blob([big]).stream()]) {
        const res = await get().s.fetch('/webhooks/bearer', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${BEARER}` },
          body,
        });
        expect(res.status).toBe(413);
      }
    });

    test('an authenticated webhook body with NUL or a lone surrogate is 400 naming the member; nothing recorded', async () => {
      const db = get().s.deployment.get(Database);
      const before = await tableFingerprint(db, get().schema);
      for (const [text, field] of [
        ['{"status":"working","task_id":"t\\u0000","idempotency_key":"whk_nul_0000000001"}', 'task_id'],
        ['{"status":"working","task_id":"t1","idempotency_key":"whk_sur_0000000001","result":{"note":"\\ud800"}}', 'result.note'],
      ] as const) {
        const res = await get().s.fetch('/webhooks/bearer', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${BEARER}` },
          body: text,
        });
        const body = (await res.json()) as { error: string; message: string };
        expect({ status: res.status, error: body.error }).toEqual({ status: 400, error: 'invalid_payload' });
        expect(body.message).toStartWith(`${field}: `);
      }
      expect(await tableFingerprint(db, get().schema)).toEqual(before);
    });

    test('a delivery the SSRF guard refuses is recorded as a blocked attempt, logged, and not retried', async () => {
      const { s } = get();
      const db = s.deployment.get(Database);
      const outbox = s.deployment.get(WebhookOutbox);
      const id = await db.transaction((tx) =>
        outbox.enqueue(tx, {
          url: 'https://127.0.0.1:9/hook',
          auth: { mode: 'bearer', token: BEARER },
          format: 'mcp',
          idempotencyKey: 'whk_blocked_000000001',
          body: JSON.stringify({ status: 'working', task_id: 't1', idempotency_key: 'whk_blocked_000000001' }),
        }),
      );
      const warnings: Array<{ obj: Record<string, unknown>; msg: string }> = [];
      const logger = { warn: (obj: Record<string, unknown>, msg: string) => void warnings.push({ obj, msg }) } as unknown as Logger;
      const worker = createDeliveryWorker(
        { db, clock: systemClock, crawler: s.deployment.get(Crawler), logger },
        {
          namespace: 'proto',
          workerId: 'w-blocked',
          batchSize: 10,
          leaseSeconds: 30,
          timeoutMs: 2000,
          baseDelaySeconds: 1,
          maxDelaySeconds: 2,
          allowHttp: false,
        },
      );
      expect(await worker.runOnce()).toBe(1);
      const [attempt] = await db.query<{ status: string; error_message: string }>(
        sql`SELECT status, error_message FROM webhook_delivery_attempts WHERE outbox_id = ${id}::uuid`,
      );
      expect(attempt!.status).toBe('blocked');
      expect(attempt!.error_message).toStartWith('ssrf_blocked: ');
      const [row] = await db.query<{ status: string }>(sql`SELECT status FROM webhook_outbox WHERE id = ${id}::uuid`);
      expect(row!.status).toBe('failed');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.msg).toContain('refused by the outbound guard');
      expect(warnings[0]!.obj).toMatchObject({ outbox_id: id, url: 'https://127.0.0.1:9/hook' });
      expect(await worker.runOnce()).toBe(0);
    });
  },
);
