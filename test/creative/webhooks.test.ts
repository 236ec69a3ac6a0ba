import { expect, test } from 'bun:test';
import { ManualTimers } from '../../core/scheduler.ts';
import { WebhookInbox, type ReceivedWebhook } from '../../core/ports/webhook-inbox.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import signerHmac from '../../plugins/signer-hmac-legacy/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { mcpClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { CreativeGenerator } from '../../core/ports/creative-generator.ts';
import { createTemplateGenerator } from '../../plugins/creative/template-generator.ts';
import { ACME, OFFERINGS, fid, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';
import { operatorBrandJson } from '../support/operator-brand-json.ts';

const POLL_MS = 1000;

interface Parties {
  seller: CreativeServer;
  timers: ManualTimers;
  buyer: TestServer;
  events: ReceivedWebhook[];
}

forEachDatabase<Parties>(
  'creative build webhooks',
  async (adapter, schema) => {
    // The seller's background jobs (the outbox delivery among them) run only when the test moves its timers.
    const timers = new ManualTimers();
    const seller = await startCreativeServer(adapter, `${schema}_s`, {
      env: { PROTOCOL_NAMESPACE: 'adcp', SECRETS_KEY: 'test-secrets-key-0123456789-abcdefghij' },
      timers,
      // A model-backed generator: every build is a task (submitted, working, completed).
      overrides: [[CreativeGenerator, { ...createTemplateGenerator(), latency: 'slow' }]],
      extra: [
        signerKeyring(),
        signerHmac(),
        operatorBrandJson({ type: 'creative', id: 'creative', domain: 'creative.test' }),
        crawlerHttp({ allowlist: ['127.0.0.1'] }),
        // One delivery at a time: the buyer fetches the seller's keys on the first and reuses them.
        webhooks({ outbox: { allowHttp: true, pollMs: POLL_MS, batchSize: 1 } }),
      ],
    });
    const events: ReceivedWebhook[] = [];
    const buyer = await startServer(
      adapter,
      `${schema}_b`,
      [
        crawlerHttp({ allowlist: ['127.0.0.1'] }),
        signerHmac(),
        webhooks({
          outbox: { workers: false },
          receiver: {
            endpoints: { signed: { mode: 'rfc9421' } },
            senders: [{ id: 'creative', brandJsonUrl: `${seller.server.base}/.well-known/brand.json` }],
            allowHttpKeys: true,
          },
        }),
      ],
      { env: { PROTOCOL_NAMESPACE: 'adcp' } },
    );
    buyer.deployment.get(WebhookInbox).subscribe((_tx, e) => void events.push(e));
    return { seller, timers, buyer, events };
  },
  async ({ seller, buyer }) => {
    await seller.server.close();
    await buyer.close();
  },
  (get) => {
    /** Run the seller's delivery job once and wait for it (each delivery awaits the buyer's answer). */
    const deliver = async () => {
      get().timers.advance(POLL_MS);
      await get().seller.server.deployment.scheduler.idle();
    };

    test('build_creative over MCP with push_notification_config: signed webhooks for working and completed, none for submitted', async () => {
      const { seller, events } = get();
      const client = await mcpClient(seller.server, TOKEN);
      const first = await client.call('build_creative', {
        idempotency_key: 'creative-webhook-000000001',
        target_format_id: fid('display_300x250_html'),
        message: 'Spring sale',
        creative_manifest: { format_id: fid('display_300x250_html'), assets: { promoted_offerings: { brand_manifest: ACME, inline_offerings: OFFERINGS } } },
        push_notification_config: { url: `${get().buyer.base}/webhooks/signed`, operation_id: 'op-creative-1' },
        context: { trace: 'wh' },
      });
      await client.close();
      expect(first.body.status).toBe('submitted');
      const taskId = first.body.task_id as string;
      await deliver();
      expect(events.filter((e) => e.payload.task_id === taskId)).toEqual([]);

      expect(await seller.runDue()).toBe(1);
      await deliver();
      const mine = events.filter((e) => e.payload.task_id === taskId);
      expect(mine.map((e) => e.payload.status).sort()).toEqual(['completed', 'working', 'working']);
      for (const e of mine) {
        expect(structuredClone(e)).toMatchObject({ sender: 'creative', format: 'mcp', endpoint: 'signed' });
        expect(structuredClone(e.payload)).toMatchObject({ operation_id: 'op-creative-1', task_type: 'build_creative', context: { trace: 'wh' } });
        // 3.0.6's task-type enum has no build_creative (3.1 added it): that one member cannot satisfy both.
        const errors = bothVersionsErrors('core/mcp-webhook-payload.json', e.payload);
        expect(errors.filter((x) => !x.startsWith('3.0.6 /task_type must be equal to one of the allowed values'))).toEqual([]);
      }
      const done = mine.find((e) => e.payload.status === 'completed')!.payload.result as any;
      expect(bothVersionsErrors('media-buy/build-creative-response.json', done)).toEqual([]);
      expect(done.creative_manifest.assets.html_creative.content).toContain('Acme Rockets');
      const working = mine.filter((e) => e.payload.status === 'working').map((e) => e.payload.result as any);
      expect(working.some((r) => r.current_step === 'generating display_300x250_html' && r.percentage === 0)).toBe(true);

      // Delivered once: another run sends nothing new.
      const count = events.length;
      await deliver();
      expect(events.length).toBe(count);
    });
  },
);
