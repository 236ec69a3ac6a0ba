import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { sql } from '../../core/sql.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Database } from '../../core/ports/database.ts';
import { ManualTimers } from '../../core/scheduler.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import inventoryDb from '../../plugins/inventory-db/index.ts';
import adServerSimulated from '../../plugins/ad-server-simulated/index.ts';
import { salesPlugins } from '../../config/sales.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import { createWebhookReceiver, toResponse } from '../../plugins/webhooks/receiver.ts';
import { DATABASE_URL, describePostgres, dropSchema, uniqueSchema } from '../support/db.ts';
import { startServer } from '../support/server.ts';
import { restClient } from '../support/agent.ts';
import { fastClock } from './support/fast-clock.ts';
import { FAULT_AD_SERVER, FAULT_OUTBOX } from './support/fault-settings.ts';
import { referenceFormats, REFERENCE_AGENT } from './support/reference-formats.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TOKEN = 'sales-fault-token-0123456789';
const BEARER = 'fault-receiver-bearer-0123456789';
const FACTOR = 3600; // one real second is one campaign hour
const HOURS = 8;

// Two processes share the database, so this needs Postgres (an in-memory PGlite lives in one process).
describePostgres('sales reporting under faults [postgres] (receiver down, sender SIGKILLed and restarted)', () => {
  test('every report arrives, each handled once, sequence numbers complete, nothing after the final one', async () => {
    const schema = uniqueSchema('sales_fault');
    const buyerSchema = uniqueSchema('sales_fault_b');
    const wallStart = Date.now();
    const virtualStart = Date.UTC(2026, 2, 2);
    const clock = fastClock(virtualStart, wallStart, FACTOR);
    const fast = { FAST_VIRTUAL_START: String(virtualStart), FAST_WALL_START: String(wallStart), FAST_FACTOR: String(FACTOR) };
    // The seller here only takes the order: its jobs never run (manual timers); the child process runs them.
    const seller = await startServer(
      'postgres',
      schema,
      [
        auth({ testTokens: [{ token: TOKEN }] }),
        tasks({ worker: false }),
        idempotency(),
        inventoryDb(),
        adServerSimulated(FAULT_AD_SERVER),
        ...salesPlugins(),
        signerKeyring(),
        referenceFormats(),
        webhooks({ outbox: { ...FAULT_OUTBOX, workers: false } }),
        restTasks(),
      ],
      { env: { PROTOCOL_NAMESPACE: 'adcp' }, overrides: [[Clock, clock]], timers: new ManualTimers() },
    );
    const buyer = await startServer('postgres', buyerSchema, [webhooks({ outbox: { workers: false } })], { env: { PROTOCOL_NAMESPACE: 'adcp' } });
    const children: ReturnType<typeof Bun.spawn>[] = [];
    let server: ReturnType<typeof Bun.serve> | null = null;
    try {
      const receiver = createWebhookReceiver({ db: buyer.deployment.get(Database), clock, verifier: null as never }, { namespace: 'adcp' });
      const handled = new Map<string, number>();
      const sequences: number[] = [];
      const stats = { requests: 0, duplicates: 0 };
      let finalAt = 0;
      let finalSequence = 0;
      let port = 0;
      const handler = async (request: Request): Promise<Response> => {
        stats.requests++;
        const body = new Uint8Array(await request.arrayBuffer());
        const result = await receiver.receive(
          { method: request.method, url: request.url, headers: request.headers, body },
          { mode: 'bearer', sender: 'sales', token: BEARER },
          'reports',
          async (_tx, e) => {
            handled.set(e.idempotencyKey, (handled.get(e.idempotencyKey) ?? 0) + 1);
            const r = e.payload.result as { sequence_number: number; notification_type: string };
            sequences.push(r.sequence_number);
            if (r.notification_type === 'final') {
              finalAt = Date.now();
              finalSequence = r.sequence_number;
            }
          },
        );
        if (result.duplicate) stats.duplicates++;
        return toResponse(result);
      };
      server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: handler });
      port = server.port!;

      const c = restClient(seller, TOKEN);
      const account = (
        await c.call('sync_accounts', {
          idempotency_key: 'fault-accounts-000001',
          accounts: [{ brand: { domain: 'fault.example' }, operator: 'fault.example', billing: 'operator' }],
        })
      ).body.accounts[0].account_id;
      const created = await c.call('create_media_buy', {
        idempotency_key: 'fault-create-00000001',
        account: { account_id: account },
        start_time: 'asap',
        end_time: new Date(clock.now().getTime() + HOURS * 3_600_000).toISOString(),
        packages: [
          {
            product_id: 'display_ros_standard',
            pricing_option_id: 'display_ros_cpm_auction',
            bid_price: 3,
            budget: 50_000,
            creatives: [
              {
                creative_id: 'f1',
                name: 'f1',
                format_id: { agent_url: REFERENCE_AGENT, id: 'display_300x250_image' },
                assets: { banner: { asset_type: 'image', url: 'https://cdn.fault.example/f1.png', width: 300, height: 250 } },
              },
            ],
          },
        ],
        reporting_webhook: {
          url: `http://127.0.0.1:${port}/hooks/reports`,
          authentication: { schemes: ['Bearer'], credentials: BEARER },
          reporting_frequency: 'hourly',
        },
      });
      expect(created.ok).toBe(true);
      const buyId = created.body.media_buy_id as string;

      const spawnSender = () => {
        const child = Bun.spawn(['bun', join(import.meta.dir, 'support/sales-sender.ts')], {
          env: { ...process.env, ...fast, DATABASE_URL: DATABASE_URL!, FAULT_SCHEMA: schema, LOG_LEVEL: 'silent' },
          stdout: 'ignore',
          stderr: 'inherit',
        });
        children.push(child);
        return child;
      };
      const first = spawnSender();
      let firstExit: number | null = null;
      void first.exited.then((code) => (firstExit = code));
      const until = async (what: () => boolean, ms: number) => {
        const deadline = Date.now() + ms;
        while (!what() && Date.now() < deadline) await sleep(20);
      };
      await until(() => sequences.length >= 2 || firstExit !== null, 60_000);
      expect(firstExit).toBeNull();
      expect(sequences.length).toBeGreaterThanOrEqual(2);

      // The receiver goes away for about three campaign hours. The sender is killed a campaign hour in
      // and restarted more than an hour later, while the receiver is still down: at least one report
      // became due while no sender ran, and its first attempt meets the outage.
      server.stop(true);
      await sleep(1000);
      first.kill('SIGKILL');
      await first.exited;
      const handledAtKill = handled.size;
      await sleep(1200);
      spawnSender();
      // The receiver comes back only once a delivery has met the outage (a slow restart under load must not skip it).
      const failedAttempts = async () =>
        (
          await seller.deployment.get(Database).query<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE status <> 'success'`)
        )[0]!.n;
      for (let i = 0; i < 600 && (await failedAttempts()) === 0; i++) await sleep(50);
      server = Bun.serve({ port, hostname: '127.0.0.1', fetch: handler });

      await until(() => finalAt > 0, 90_000);
      expect(finalAt).toBeGreaterThan(0);
      // Quiet for a while after the final report: nothing is made after it. Webhooks are not ordered (receivers
      // order by sequence_number): an earlier report retried after the outage may still arrive after the final.
      await sleep(1500);
      expect(sequences.filter((n) => n > finalSequence)).toEqual([]);

      const db = seller.deployment.get(Database);
      const [pending] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_outbox WHERE status <> 'delivered'`);
      expect(pending!.n).toBe(0);
      // One scheduled report per full hour since activation (the sender's start-up delays it), then the final:
      // every number from 1 to the last, each handled once, the final last.
      const [buy] = await db.query<{ status: string; report_seq: number }>(
        sql`SELECT status, report_seq FROM sales_media_buys WHERE media_buy_id = ${buyId}::text`,
      );
      expect(buy!.status).toBe('completed');
      expect(buy!.report_seq).toBeGreaterThanOrEqual(HOURS - 3);
      expect([...sequences].sort((a, b) => a - b)).toEqual(Array.from({ length: buy!.report_seq }, (_, i) => i + 1));
      expect(finalSequence).toBe(buy!.report_seq);
      expect([...handled.values()].every((n) => n === 1)).toBe(true);
      // The outage really cost attempts.
      const [failed] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE status <> 'success'`);
      expect(failed!.n).toBeGreaterThan(0);
      expect(handledAtKill).toBeLessThan(buy!.report_seq);
      console.log('sales fault test', { ...stats, handledAtKill, failedAttempts: failed!.n });
    } finally {
      for (const child of children) child.kill('SIGKILL');
      server?.stop(true);
      await seller.close();
      await buyer.close();
      await dropSchema('postgres', schema);
      await dropSchema('postgres', buyerSchema);
    }
  }, 180_000);
});
