/**
 * Child process of the sales fault test: a seller instance running the sales lifecycle job and the
 * webhook delivery workers against the shared Postgres schema, on the test's fast clock. The test
 * SIGKILLs it mid-campaign and starts it again.
 */
import { assemble } from '../../../core/deployment.ts';
import { definePreset } from '../../../core/config.ts';
import { Clock } from '../../../core/ports/clock.ts';
import storagePostgres from '../../../plugins/storage-postgres/index.ts';
import auth from '../../../plugins/auth/index.ts';
import tasks from '../../../plugins/tasks/index.ts';
import idempotency from '../../../plugins/idempotency/index.ts';
import inventoryDb from '../../../plugins/inventory-db/index.ts';
import adServerSimulated from '../../../plugins/ad-server-simulated/index.ts';
import { salesPlugins } from '../../../config/sales.ts';
import signerKeyring from '../../../plugins/signer-keyring/index.ts';
import crawlerHttp from '../../../plugins/crawler-http/index.ts';
import webhooks from '../../../plugins/webhooks/index.ts';
import { fastClock } from './fast-clock.ts';
import { FAULT_AD_SERVER, FAULT_OUTBOX } from './fault-settings.ts';

const env = process.env;
const clock = fastClock(Number(env.FAST_VIRTUAL_START), Number(env.FAST_WALL_START), Number(env.FAST_FACTOR));
const preset = definePreset({
  name: 'sales-fault-sender',
  protocol: { namespace: 'adcp' },
  plugins: [
    storagePostgres({ url: env.DATABASE_URL!, schema: env.FAULT_SCHEMA!, max: 4 }),
    auth(),
    tasks({ worker: false }),
    idempotency({ purgeIntervalSeconds: 0 }),
    inventoryDb({ seed: false }),
    adServerSimulated(FAULT_AD_SERVER),
    ...salesPlugins({ jobIntervalMs: 20 }),
    signerKeyring(),
    crawlerHttp({ allowlist: ['127.0.0.1'] }),
    webhooks({ outbox: FAULT_OUTBOX }),
  ],
});
const deployment = await assemble(preset, { env: { LOG_LEVEL: 'silent' }, overrides: [[Clock, clock]] });
await deployment.start();
console.log('ready');
