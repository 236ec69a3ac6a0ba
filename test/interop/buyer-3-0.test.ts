import { expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ManualTimers } from '../../core/scheduler.ts';
import { WebhookInbox, type ReceivedWebhook } from '../../core/ports/webhook-inbox.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { schemaErrors } from '../support/schemas.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from '../agents/fixture.ts';
import { deliverWebhooks } from './support.ts';
import { operatorBrandJson } from '../support/operator-brand-json.ts';

// A buyer built on AdCP 3.0 (what deployed official clients speak): it validates every answer
// against the 3.0.6 schemas, sends 3.0 request shapes over MCP, registers push notifications with
// only a `url`, and runs its webhook receiver on loopback, which the agent reaches through the
// development setting DEV_LOOPBACK_WEBHOOKS (the agent's crawler has no test allowlist).
const V30 = '3.0.6' as const;
const POLL_MS = 1000;

interface World {
  seller: SignalsServer;
  buyer: TestServer;
  timers: ManualTimers;
  events: ReceivedWebhook[];
}

forEachDatabase<World>(
  'a 3.0 buyer over MCP',
  async (adapter, schema) => {
    const timers = new ManualTimers();
    const seller = await startSignalsServer(adapter, `${schema}_s`, {
      env: { PROTOCOL_NAMESPACE: 'adcp', DEV_LOOPBACK_WEBHOOKS: 'true' },
      extra: [signerKeyring(), operatorBrandJson({ type: 'signals', domain: 'signals.test' }), crawlerHttp(), webhooks({ outbox: { pollMs: POLL_MS } })],
      timers,
    });
    const events: ReceivedWebhook[] = [];
    const buyer = await startServer(
      adapter,
      `${schema}_b`,
      [
        crawlerHttp({ allowlist: ['127.0.0.1'] }),
        webhooks({
          outbox: { workers: false },
          receiver: {
            endpoints: { signals: { mode: 'rfc9421' } },
            senders: [{ id: 'signals-operator', brandJsonUrl: `${seller.server.base}/.well-known/brand.json` }],
            allowHttpKeys: true,
          },
        }),
      ],
      { env: { PROTOCOL_NAMESPACE: 'adcp' } },
    );
    buyer.deployment.get(WebhookInbox).subscribe((_tx, e) => void events.push(e));
    return { seller, buyer, timers, events };
  },
  async ({ seller, buyer }) => {
    await buyer.close();
    await seller.server.close();
  },
  (get) => {
    test('discover by spec, re-find by signal_ids, activate on a platform and an unknown agent, receive signed webhooks', async () => {
      const { seller, buyer, timers, events } = get();
      const client = new Client({ name: 'adcp-3.0-buyer', version: '3.0.6' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${seller.server.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }),
      );
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: { adcp_major_version: 3, ...args } })) as any;
        return { ok: !result.isError, body: result.structuredContent };
      };
      try {
        const found = await call('get_signals', {
          signal_spec: 'electric vehicle intenders',
          destinations: [{ type: 'platform', platform: 'the-trade-desk' }],
          countries: ['US'],
          pagination: { max_results: 5 },
        });
        expect(schemaErrors('signals/get-signals-response.json', found.body, V30)).toEqual([]);
        const ev = found.body.signals.find((x: any) => x.signal_agent_segment_id === 'sig_auto_intenders_ev');
        expect(ev.signal_id).toEqual({ source: 'catalog', data_provider_domain: expect.any(String), id: 'sig_auto_intenders_ev' });

        const refound = await call('get_signals', { signal_ids: [ev.signal_id] });
        expect(schemaErrors('signals/get-signals-response.json', refound.body, V30)).toEqual([]);
        expect(refound.body.signals.map((x: any) => x.signal_agent_segment_id)).toEqual(['sig_auto_intenders_ev']);

        const hook = { url: `${buyer.base}/webhooks/signals` };
        const onPlatform = await call('activate_signal', {
          signal_agent_segment_id: ev.signal_agent_segment_id,
          destinations: [{ type: 'platform', platform: 'the-trade-desk' }],
          pricing_option_id: ev.pricing_options[0].pricing_option_id,
          idempotency_key: crypto.randomUUID(),
          push_notification_config: hook,
        });
        const onAgent = await call('activate_signal', {
          signal_agent_segment_id: ev.signal_agent_segment_id,
          destinations: [{ type: 'agent', agent_url: 'https://sales.never-heard-of.example/mcp' }],
          idempotency_key: crypto.randomUUID(),
          push_notification_config: hook,
        });
        for (const first of [onPlatform, onAgent]) {
          expect(first.ok).toBe(true);
          expect(schemaErrors('signals/activate-signal-response.json', first.body, V30)).toEqual([]);
          expect(first.body.status).toBe('submitted');
        }
        const segment = onPlatform.body.deployments[0];
        expect(segment).toMatchObject({ is_live: false, activation_key: { type: 'segment_id', segment_id: expect.any(String) } });

        expect(await seller.runDue()).toBe(2);
        await deliverWebhooks(seller.server, timers, POLL_MS);
        const byTask = (id: string) => events.filter((e) => e.payload.task_id === id);
        for (const first of [onPlatform, onAgent]) {
          const received = byTask(first.body.task_id);
          expect(received.map((e) => e.payload.status).sort()).toEqual(['completed', 'working']);
          for (const e of received) {
            // Signed (RFC 9421, verified against the operator's JWKS) and valid for a 3.0 receiver.
            expect(e).toMatchObject({ sender: 'signals-operator', format: 'mcp' });
            expect(schemaErrors('core/mcp-webhook-payload.json', e.payload, V30)).toEqual([]);
            // No operation_id was registered: the task id correlates.
            expect(e.payload.operation_id).toBe(first.body.task_id);
          }
          const done = received.find((e) => e.payload.status === 'completed')!.payload.result as any;
          expect(schemaErrors('signals/activate-signal-response.json', done, V30)).toEqual([]);
          expect(done.deployments[0].is_live).toBe(true);
        }
        const live = byTask(onPlatform.body.task_id).find((e) => e.payload.status === 'completed')!.payload.result as any;
        expect(live.deployments[0].activation_key).toEqual(segment.activation_key);
      } finally {
        await client.close();
      }
    }, 60_000);
  },
);
