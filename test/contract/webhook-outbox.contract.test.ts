import { ManualClock } from '../../core/ports/clock.ts';
import { Database } from '../../core/ports/database.ts';
import { WebhookOutbox } from '../../core/ports/webhook-outbox.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import signerHmac from '../../plugins/signer-hmac-legacy/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { webhookOutboxContract } from './webhook-outbox.contract.ts';

const POLL_MS = 1000;

// plugins/webhooks with its delivery workers (signers and the SSRF-guarded crawler, loopback allowlisted) on each adapter.
forEachAdapter('webhook outbox contract', (adapter) =>
  webhookOutboxContract(`webhooks [${adapter}]`, async () => {
    const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
    const d = await deploy(
      adapter,
      [signerKeyring(), signerHmac(), crawlerHttp({ allowlist: ['127.0.0.1'] }), webhooks({ outbox: { allowHttp: true, pollMs: POLL_MS, timeoutMs: 5000 } })],
      { clock, env: { PROTOCOL_NAMESPACE: 'adcp', SECRETS_KEY: 'contract-secrets-key-0123456789abcdef' } },
    );
    return {
      port: d.deployment.get(WebhookOutbox),
      db: d.deployment.get(Database),
      clock,
      hmacHeader: 'X-ADCP-Signature',
      async deliver() {
        d.timers.advance(POLL_MS);
        await d.deployment.scheduler.idle();
      },
      close: () => d.close(),
    };
  }),
);
