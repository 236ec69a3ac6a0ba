import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { WebhookInbox, type ReceivedWebhook } from '../../core/ports/webhook-inbox.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import signerHmac from '../../plugins/signer-hmac-legacy/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { mcpClient } from '../support/agent.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from '../agents/fixture.ts';
import { operatorBrandJson } from '../support/operator-brand-json.ts';

// The signals agent's activation lifecycle emits real webhooks: signed (RFC 9421) or legacy HMAC,
// through the outbox and the SSRF-guarded crawler, to a verifying, deduplicating receiver.
const SECRET = 'Zk3q9VYt1mXw8s2LpR7uJc4aN6bQe0Hd';
const TTD = { type: 'platform', platform: 'the-trade-desk' };

interface Parties {
  seller: SignalsServer;
  buyer: TestServer;
  events: ReceivedWebhook[];
}

forEachDatabase<Parties>(
  'signals activation webhooks',
  async (adapter, schema) => {
    const seller = await startSignalsServer(adapter, `${schema}_s`, {
      // Stored signing keys and webhook credentials are sealed with this key.
      env: { SECRETS_KEY: 'test-secrets-key-0123456789-abcdefghij' },
      extra: [
        signerKeyring(),
        signerHmac(),
        operatorBrandJson({ type: 'signals', id: 'signals', domain: 'signals.test' }),
        crawlerHttp({ allowlist: ['127.0.0.1'] }),
        webhooks({ outbox: { allowHttp: true, pollMs: 20, baseDelaySeconds: 0.05, maxDelaySeconds: 0.2 } }),
      ],
    });
    const events: ReceivedWebhook[] = [];
    const buyer = await startServer(adapter, `${schema}_b`, [
      crawlerHttp({ allowlist: ['127.0.0.1'] }),
      signerHmac(),
      webhooks({
        outbox: { workers: false },
        receiver: {
          endpoints: { signed: { mode: 'rfc9421' }, hmac: { mode: 'hmac', sender: 'signals-hmac', secrets: [SECRET] } },
          senders: [{ id: 'signals', brandJsonUrl: `${seller.server.base}/.well-known/brand.json` }],
          allowHttpKeys: true,
        },
      }),
    ]);
    buyer.deployment.get(WebhookInbox).subscribe((_tx, e) => void events.push(e));
    return { seller, buyer, events };
  },
  async ({ seller, buyer }) => {
    await seller.server.close();
    await buyer.close();
  },
  (get) => {
    /** Step the task worker (off in tests) and let the outbox deliver, until `what` holds. */
    const until = async (what: () => boolean) => {
      for (let i = 0; i < 250 && !what(); i++) {
        await get().seller.runDue();
        await Bun.sleep(20);
      }
    };

    test('activate_signal over MCP with push_notification_config: signed webhooks after the initial response, verified and deduplicated', async () => {
      const { seller, buyer, events } = get();
      const client = await mcpClient(seller.server, TOKEN);
      const first = await client.call('activate_signal', {
        signal_agent_segment_id: 'sig_auto_intenders_ev',
        deployments: [TTD],
        idempotency_key: 'webhook-e2e-mcp-000001',
        context: { trace: 'e2e' },
        push_notification_config: { url: `${buyer.base}/webhooks/signed`, operation_id: 'op-e2e-1' },
      });
      await client.close();
      expect(first.body.status).toBe('submitted');
      const taskId = first.body.task_id as string;
      const mine = () => events.filter((e) => e.payload.task_id === taskId);
      await until(() => mine().some((e) => e.payload.status === 'completed'));

      const received = mine();
      // The initial `submitted` travelled in the response: no webhook for it.
      expect(received.map((e) => e.payload.status)).not.toContain('submitted');
      // Deliveries are concurrent, so arrival order is not status order.
      const done = received.find((e) => e.payload.status === 'completed');
      expect(done).toBeDefined();
      for (const e of received) {
        expect(e).toMatchObject({ sender: 'signals', format: 'mcp', endpoint: 'signed', reemission: false });
        expect(e.payload).toMatchObject({ task_id: taskId, operation_id: 'op-e2e-1', task_type: 'activate_signal', context: { trace: 'e2e' } });
        expect(e.payload.idempotency_key).toBe(e.idempotencyKey);
      }
      expect(new Set(received.map((e) => e.idempotencyKey)).size).toBe(received.length);
      const completed = done!.payload.result as any;
      expect(completed.deployments[0]).toMatchObject({ is_live: true, activation_key: expect.any(Object) });
    }, 30_000);

    test('legacy HMAC when the registration carries authentication; a terminal first answer schedules nothing', async () => {
      const { seller, buyer, events } = get();
      const client = await mcpClient(seller.server, TOKEN);
      const first = await client.call('activate_signal', {
        signal_agent_segment_id: 'sig_auto_luxury_owners',
        deployments: [TTD],
        idempotency_key: 'webhook-e2e-hmac-00001',
        push_notification_config: {
          url: `${buyer.base}/webhooks/hmac`,
          operation_id: 'op-e2e-hmac',
          authentication: { schemes: ['HMAC-SHA256'], credentials: SECRET },
        },
      });
      const taskId = first.body.task_id as string;
      await until(() => events.some((e) => e.payload.task_id === taskId && e.payload.status === 'completed'));
      const received = events.filter((e) => e.payload.task_id === taskId);
      expect(received.find((e) => e.payload.status === 'completed')).toMatchObject({
        sender: 'signals-hmac',
        endpoint: 'hmac',
        payload: { operation_id: 'op-e2e-hmac' },
      });
      // Secrets at rest are sealed: neither the HMAC secret nor the private signing key is stored in clear.
      const db = seller.server.deployment.get(Database);
      const outbox = await db.query<{ credentials: string }>(sql`SELECT credentials FROM webhook_outbox WHERE task_id = ${taskId}::text`);
      expect(outbox.length).toBeGreaterThan(0);
      for (const row of outbox) expect(row.credentials).toStartWith('sealed:v1:');
      const [task] = await db.query<{ credentials: string }>(
        sql`SELECT push_notification_config->'authentication'->>'credentials' AS credentials FROM tasks WHERE id = ${taskId}::uuid`,
      );
      expect(task!.credentials).toStartWith('sealed:v1:');
      // Reading the task back never returns the registration's secret.
      const read = await seller.server.fetch(`/tasks/${taskId}?include_history=true`, { token: TOKEN });
      expect(read.status).toBe(200);
      expect(await read.text()).not.toContain(SECRET);
      const keys = await db.query<{ private_jwk: any }>(sql`SELECT private_jwk FROM signer_keys`);
      for (const k of keys) {
        expect(k.private_jwk.d).toBeUndefined();
        expect(k.private_jwk.sealed).toStartWith('sealed:v1:');
      }

      // get_signals answers in full at once: a push registration on it never produces a webhook.
      const before = events.length;
      const sync = await client.call('get_signals', {
        signal_spec: 'luxury car owners',
        push_notification_config: { url: `${buyer.base}/webhooks/signed`, operation_id: 'op-sync' },
      });
      expect(sync.body.status).toBe('completed');
      await seller.runDue();
      // Nothing was queued for it (so nothing can arrive later), and nothing arrived.
      const queued = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_outbox WHERE body LIKE ${'%op-sync%'}::text`);
      expect(queued[0]!.n).toBe(0);
      expect(events.slice(before).filter((e) => e.payload.operation_id === 'op-sync')).toEqual([]);
      await client.close();
    }, 30_000);

    test('A2A-native registration: TaskStatusUpdateEvent / Task bodies, signed, with the registration token echoed', async () => {
      const { seller } = get();
      const seen: Array<{ headers: Headers; body: any }> = [];
      const capture = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        async fetch(request) {
          seen.push({ headers: request.headers, body: await request.json() });
          return new Response(null, { status: 204 });
        },
      });
      try {
        const rpc = async (method: string, params: unknown) =>
          (await (await seller.server.fetch('/a2a', { method: 'POST', token: TOKEN, json: { jsonrpc: '2.0', id: 1, method, params } })).json()) as any;
        const sent = await rpc('message/send', {
          message: {
            kind: 'message',
            messageId: crypto.randomUUID(),
            role: 'user',
            parts: [
              {
                kind: 'data',
                data: {
                  skill: 'activate_signal',
                  input: { signal_agent_segment_id: 'sig_travel_summer_vacationers', deployments: [TTD], idempotency_key: 'webhook-e2e-a2a-000001' },
                },
              },
            ],
          },
          configuration: { pushNotificationConfig: { url: `http://127.0.0.1:${capture.port}/a2a-hook`, token: 'a2a-registration-token-01' } },
        });
        const taskId = sent.result.id as string;
        await until(() => seen.some((x) => x.body.kind === 'task' && x.body.id === taskId));
        const mine = seen.filter((x) => (x.body.taskId ?? x.body.id) === taskId);
        expect(mine.length).toBeGreaterThan(0);
        for (const x of mine) {
          expect(x.headers.get('x-a2a-notification-token')).toBe('a2a-registration-token-01');
          expect(x.headers.get('signature-input')).toContain('sig1=');
          expect(x.headers.get('content-digest')).toMatch(/^sha-256=:/);
        }
        const final = mine.find((x) => x.body.kind === 'task')!.body;
        expect(final.status.state).toBe('completed');
        const interim = mine.filter((x) => x.body.kind === 'status-update');
        for (const x of interim) expect(x.body.status.state).toBe('working');
      } finally {
        capture.stop(true);
      }
    }, 30_000);
  },
);
