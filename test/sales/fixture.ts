import { sql } from '../../core/sql.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { Database } from '../../core/ports/database.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import { ManualTimers } from '../../core/scheduler.ts';
import { WebhookInbox, type ReceivedWebhook } from '../../core/ports/webhook-inbox.ts';
import type { PluginEntry } from '../../core/config.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import inventoryDb from '../../plugins/inventory-db/index.ts';
import adServerSimulated, { type AdServerSimulatedOptions } from '../../plugins/ad-server-simulated/index.ts';
import { salesPlugins, type SalesOptions } from '../../config/sales.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import signerHmac from '../../plugins/signer-hmac-legacy/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import type { HttpCrawlerOptions as CrawlerHttpOptions } from '../../plugins/crawler-http/crawler.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import a2aHost from '../../hosts/a2a/index.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { clientFor, type HostName, type TaskClient } from '../support/agent.ts';
import type { AdapterName } from '../support/db.ts';
import { referenceFormats } from './support/reference-formats.ts';
import { operatorBrandJson } from '../support/operator-brand-json.ts';

export const TOKEN = 'sales-test-token-0123456789';
export const OTHER_TOKEN = 'sales-other-token-0123456789';
export const HMAC_SECRET = 'Zk3q9VYt1mXw8s2LpR7uJc4aN6bQe0Hd';
/** Monday 2 March 2026, midnight UTC: every suite's clock starts here. */
export const T0 = new Date('2026-03-02T00:00:00.000Z');
export const MIN = 60_000;
export const HOUR = 3_600_000;

export interface SalesWorld {
  seller: TestServer;
  buyer: TestServer;
  clock: ManualClock;
  /** Webhooks the buyer accepted (verified, first seen), in arrival order. */
  events: ReceivedWebhook[];
  /** While true the buyer's handler fails, so the receiver answers 500 (a failed attempt). */
  receiver: { down: boolean };
  /** Run every job that has due work (lifecycle, ad server events, task steps, outbox) until nothing is due. */
  settle(): Promise<void>;
  /** Move the clock, then settle. */
  advance(ms: number): Promise<void>;
  client(host: HostName, token?: string): Promise<TaskClient>;
  /** Another instance of the seller on the same database and clock; `settle` runs its jobs too. */
  addInstance(): Promise<{ server: TestServer; timers: ManualTimers }>;
  close(): Promise<void>;
}

export interface WorldOptions {
  adServer?: AdServerSimulatedOptions;
  sales?: SalesOptions;
  env?: Record<string, string>;
  extra?: PluginEntry[];
  /** Bind the reference formats as this deployment's creative agent (default true). */
  localFormats?: boolean;
  /** Options of the seller's crawler (loopback is always allowlisted). */
  crawler?: Omit<CrawlerHttpOptions, 'allowlist'>;
}

/**
 * A seller (sales agent on the simulated ad server) and a buyer (verifying webhook receiver) on
 * loopback, sharing one ManualClock; background jobs run on ManualTimers, so time only moves
 * when a test says so and `settle` drives every due job to completion.
 */
export async function startSalesWorld(adapter: AdapterName, schema: string, options: WorldOptions = {}): Promise<SalesWorld> {
  const clock = new ManualClock(T0);
  const sellerTimers = new ManualTimers();
  const env = { SECRETS_KEY: 'test-secrets-key-0123456789-abcdefghij', ...options.env };
  const sellerPlugins = (): PluginEntry[] => [
    auth({
      testTokens: [
        { token: TOKEN, name: 'buyer' },
        { token: OTHER_TOKEN, name: 'other buyer' },
      ],
    }),
    tasks({ worker: false }),
    idempotency(),
    inventoryDb(),
    adServerSimulated({ delayMinutes: 10, lateProbability: 0, adjustmentProbability: 0, ...options.adServer }),
    ...salesPlugins({ jobIntervalMs: 1000, ...options.sales }),
    signerKeyring(),
    signerHmac(),
    operatorBrandJson({ type: 'sales', id: 'sales', domain: 'sales.test' }),
    crawlerHttp({ allowlist: ['127.0.0.1'], ...options.crawler }),
    webhooks({ outbox: { allowHttp: true, pollMs: 100, baseDelaySeconds: 30, maxDelaySeconds: 60 } }),
    ...(options.localFormats === false ? [] : [referenceFormats()]),
    ...(options.extra ?? []),
    restTasks(),
    mcpHost(),
    a2aHost(),
  ];
  const sellerSchema = `${schema}_s`;
  const seller = await startServer(adapter, sellerSchema, sellerPlugins(), { env, overrides: [[Clock, clock]], timers: sellerTimers });
  const events: ReceivedWebhook[] = [];
  const receiver = { down: false };
  const instances: Array<{ server: TestServer; timers: ManualTimers }> = [];
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
            reports: { mode: 'hmac', sender: 'sales-hmac', secrets: [HMAC_SECRET] },
            reports2: { mode: 'hmac', sender: 'sales-hmac', secrets: [HMAC_SECRET] },
          },
          senders: [{ id: 'sales', brandJsonUrl: `${seller.base}/.well-known/brand.json` }],
          allowHttpKeys: true,
        },
      }),
    ],
    { env, overrides: [[Clock, clock]], timers: new ManualTimers() },
  );
  buyer.deployment.get(WebhookInbox).subscribe((_tx, e) => {
    if (receiver.down) throw new Error('buyer endpoint is down');
    events.push(e);
  });
  const db = seller.deployment.get(Database);
  const store = seller.deployment.get(TaskStore);
  const pending = async () => {
    const now = clock.now();
    const [row] = await db.query<{ n: number }>(sql`SELECT
      (SELECT count(*) FROM sales_media_buys WHERE due_at <= ${now}::timestamptz)
      + (SELECT count(*) FROM adsim_events WHERE dispatched_at IS NULL AND due_at <= ${now}::timestamptz)
      + (SELECT count(*) FROM webhook_outbox WHERE status = 'pending' AND next_attempt_at <= ${now}::timestamptz)
      + (SELECT count(*) FROM tasks WHERE status IN ('submitted', 'working') AND run_at <= ${now}::timestamptz) AS n`);
    return Number(row!.n);
  };
  // Every instance's jobs fire in the same round, so instances compete for the same due work.
  const settle = async () => {
    for (let round = 0; round < 50; round++) {
      await store.runDue();
      const all = [{ server: seller, timers: sellerTimers }, ...instances];
      for (const i of all) i.timers.advance(60_000);
      await Promise.all(all.map((i) => i.server.deployment.scheduler.idle()));
      if ((await pending()) === 0) return;
    }
    throw new Error(`jobs did not settle: ${await pending()} items still due`);
  };
  return {
    seller,
    buyer,
    clock,
    events,
    receiver,
    settle,
    async advance(ms) {
      clock.advance(ms);
      await settle();
    },
    client: (host, token = TOKEN) => clientFor(host, seller, token),
    async addInstance() {
      const timers = new ManualTimers();
      const server = await startServer(adapter, sellerSchema, sellerPlugins(), { env, overrides: [[Clock, clock]], timers });
      instances.push({ server, timers });
      return { server, timers };
    },
    async close() {
      for (const i of instances) await i.server.close();
      await seller.close();
      await buyer.close();
    },
  };
}
