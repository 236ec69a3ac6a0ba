/**
 * Child process of the fault test: a seller instance whose only job is running the webhook
 * delivery workers against the shared Postgres schema. The test SIGKILLs it mid-delivery and
 * starts it again.
 */
import { assemble } from '../../../core/deployment.ts';
import { definePreset } from '../../../core/config.ts';
import storagePostgres from '../../../plugins/storage-postgres/index.ts';
import signerKeyring from '../../../plugins/signer-keyring/index.ts';
import crawlerHttp from '../../../plugins/crawler-http/index.ts';
import webhooks from '../../../plugins/webhooks/index.ts';

const url = process.env.DATABASE_URL!;
const schema = process.env.FAULT_SCHEMA!;
const preset = definePreset({
  name: 'fault-sender',
  protocol: { namespace: 'adcp' },
  plugins: [
    storagePostgres({ url, schema, max: 4 }),
    signerKeyring(),
    crawlerHttp({ allowlist: ['127.0.0.1'] }),
    webhooks({
      outbox: { workers: true, allowHttp: true, batchSize: 4, pollMs: 50, leaseSeconds: 5, timeoutMs: 1000, baseDelaySeconds: 0.05, maxDelaySeconds: 0.5 },
    }),
  ],
});
const deployment = await assemble(preset, { env: { LOG_LEVEL: 'silent' } });
await deployment.start();
console.log('ready');
