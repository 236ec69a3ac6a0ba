import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database, type Queryable } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Signer } from '../../core/ports/signer.ts';
import { HmacSigner } from '../../core/ports/hmac-signer.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { Http } from '../../core/http.ts';
import { WebhookOutbox } from '../../core/ports/webhook-outbox.ts';
import { WebhookInbox, type ReceivedWebhook } from '../../core/ports/webhook-inbox.ts';
import { WebhookActivity } from '../../core/ports/webhook-activity.ts';
import { createWebhookActivity } from './activity.ts';
import { createOutbox } from './outbox.ts';
import { createTaskNotifier } from './notifier.ts';
import { TaskNotifier } from '../../core/ports/task-notifier.ts';
import { createDeliveryWorker } from './worker.ts';
import { createWebhookVerifier, MAX_WEBHOOK_BYTES } from '../../lib/rfc9421/verify.ts';
import { readCapped } from '../../lib/streams.ts';
import { createReplayStore, createRevocationList, purgeReplayNonces } from './receiver-stores.ts';
import { createJwksResolver } from './key-resolver.ts';
import { createWebhookReceiver, purgeReceived, toResponse, type ReceiverRegistration } from './receiver.ts';

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

const endpoint = v.variant('mode', [
  v.object({ mode: v.literal('rfc9421') }),
  v.object({
    mode: v.literal('hmac'),
    sender: v.pipe(v.string(), v.minLength(1)),
    secrets: v.pipe(v.array(v.pipe(v.string(), v.minLength(32))), v.minLength(1), v.maxLength(2)),
  }),
  v.object({ mode: v.literal('bearer'), sender: v.pipe(v.string(), v.minLength(1)), token: v.pipe(v.string(), v.minLength(16)) }),
]);

const sender = v.pipe(
  v.object({
    id: v.pipe(v.string(), v.minLength(1)),
    brandJsonUrl: v.optional(v.pipe(v.string(), v.url())),
    agentUrl: v.optional(v.pipe(v.string(), v.url())),
    jwksUri: v.optional(v.pipe(v.string(), v.url())),
  }),
  v.check((s) => !!(s.brandJsonUrl || s.jwksUri), 'give brandJsonUrl or jwksUri'),
);

const options = v.object({
  outbox: v.optional(
    v.object({
      /** Give up this long after enqueue (receivers keep dedup state 24 h, so never more). */
      horizonHours: v.optional(v.pipe(v.number(), v.minValue(0.001), v.maxValue(24)), 24),
      workers: v.optional(v.boolean(), true),
      batchSize: v.optional(int(1, 500), 16),
      leaseSeconds: v.optional(int(5), 60),
      timeoutMs: v.optional(int(100, 60_000), 10_000),
      baseDelaySeconds: v.optional(v.pipe(v.number(), v.minValue(0.01)), 5),
      maxDelaySeconds: v.optional(v.pipe(v.number(), v.minValue(0.01)), 3600),
      pollMs: v.optional(int(10), 1000),
      /** http:// targets (loopback tests with the crawler's allowlist); never in production. */
      allowHttp: v.optional(v.boolean(), false),
      /**
       * DEVELOPMENT ONLY: deliver to loopback targets (127.0.0.0/8, ::1, localhost, plain http
       * allowed) so a buyer can test against an agent with a receiver on its laptop. Never other
       * private ranges; no preset sets it; logged loudly at start.
       */
      allowLoopback: v.optional(v.boolean(), false),
    }),
    {},
  ),
  receiver: v.optional(
    v.object({
      path: v.optional(v.pipe(v.string(), v.startsWith('/'), v.includes('{endpoint}')), '/webhooks/{endpoint}'),
      /** External base URL when behind a proxy (the signed @target-uri is the external one). */
      publicUrl: v.optional(v.pipe(v.string(), v.url())),
      endpoints: v.record(v.pipe(v.string(), v.regex(/^[a-z0-9_-]{1,64}$/)), endpoint),
      senders: v.optional(v.array(sender), []),
      perSenderCap: v.optional(int(1), 100_000),
      perKeyidCap: v.optional(int(1), 10_000),
      revocationStaleSeconds: v.optional(int(60), 7200),
      dedupHours: v.optional(v.pipe(v.number(), v.minValue(24)), 25),
      /** Fetch brand.json / JWKS over http (loopback tests only). */
      allowHttpKeys: v.optional(v.boolean(), false),
    }),
  ),
});

export type WebhooksOptions = v.InferInput<typeof options>;

/**
 * Signed webhooks: the durable outbox and its delivery workers (send side), the per-attempt read
 * of fires enqueued with `activity` (WebhookActivity, e.g. get_media_buys webhook_activity), and the
 * verifying, deduplicating receiver endpoint (receive side).
 */
export default definePlugin({
  name: 'webhooks',
  provides: [WebhookOutbox, WebhookInbox, TaskNotifier, WebhookActivity],
  deps: {
    db: Database,
    http: Http,
    clock: Clock,
    ids: Ids,
    box: SecretBox,
    signer: optional(Signer),
    hmac: optional(HmacSigner),
    crawler: optional(Crawler),
  },
  options,
  env: { DEV_LOOPBACK_WEBHOOKS: { path: 'outbox.allowLoopback', type: 'bool' } },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, http, clock, ids, box, signer, hmac, crawler }, kernel) {
    const ns = kernel.config.protocol.namespace;
    const o = kernel.options.outbox;
    const outbox = createOutbox({ ids, clock, hmac, box }, { horizonSeconds: o.horizonHours * 3600 });
    kernel.provide(WebhookOutbox, outbox);
    kernel.provide(TaskNotifier, createTaskNotifier(outbox, ids, hmac));
    kernel.provide(WebhookActivity, createWebhookActivity(db));

    const handlers: Array<(tx: Queryable, e: ReceivedWebhook) => Promise<void> | void> = [];
    kernel.provide(WebhookInbox, { subscribe: (h) => void handlers.push(h) });

    const r = kernel.options.receiver;
    if (r) {
      const keys = crawler
        ? createJwksResolver({ db, clock, crawler, namespace: ns }, r.senders, { requireHttps: !r.allowHttpKeys })
        : { resolve: async () => null };
      const verifier = createWebhookVerifier({
        namespace: ns,
        keys,
        replay: createReplayStore(db),
        revocation: createRevocationList(db, r.revocationStaleSeconds),
        clock,
        perKeyidCap: r.perKeyidCap,
        maxBodyBytes: MAX_WEBHOOK_BYTES,
      });
      const receiver = createWebhookReceiver({ db, clock, verifier, hmac }, { namespace: ns, perSenderCap: r.perSenderCap, dedupSeconds: r.dedupHours * 3600 });
      const endpoints = new Map(Object.entries(r.endpoints) as [string, ReceiverRegistration][]);
      http.add({
        method: 'POST',
        path: r.path,
        async handle(request, { params }) {
          const name = params.endpoint ?? '';
          const reg = endpoints.get(name);
          if (!reg) return Response.json({ error: 'not_found', message: `No webhook endpoint ${name.slice(0, 64)}` }, { status: 404 });
          const declared = Number(request.headers.get('content-length') ?? 0);
          if (declared > MAX_WEBHOOK_BYTES) return Response.json({ error: 'webhook_payload_too_large', message: 'Webhook body exceeds 1 MB' }, { status: 413 });
          let body: Uint8Array | null;
          try {
            body = await readCapped(request.body, MAX_WEBHOOK_BYTES);
          } catch {
            // The sender went away mid-body: its doing, not a server error.
            return Response.json({ error: 'invalid_request', message: 'The request body could not be read to its end' }, { status: 400 });
          }
          if (!body) return Response.json({ error: 'webhook_payload_too_large', message: 'Webhook body exceeds 1 MB' }, { status: 413 });
          const url = r.publicUrl ? new URL(new URL(request.url).pathname + new URL(request.url).search, r.publicUrl).href : request.url;
          const result = await receiver.receive({ method: request.method, url, headers: request.headers, body }, reg, name, async (tx, event) => {
            for (const h of handlers) await h(tx, event);
          });
          return toResponse(result);
        },
      });
      kernel.scheduler.add({
        name: 'receiver-janitor',
        intervalMs: 60_000,
        runAtStart: false,
        async run() {
          const now = clock.now();
          await purgeReplayNonces(db, now);
          await purgeReceived(db, now);
        },
      });
    }

    if (o.workers && !crawler) kernel.logger.warn('no crawler port in this deployment: webhooks are queued but not delivered');
    if (o.allowLoopback) {
      kernel.logger.warn(
        { setting: 'DEV_LOOPBACK_WEBHOOKS', targets: ['127.0.0.0/8', '::1', 'localhost'] },
        '!!! DEVELOPMENT SETTING ON: webhooks are delivered to loopback addresses over plain http. Never enable this in production. !!!',
      );
    }
    if (o.workers && crawler) {
      const worker = createDeliveryWorker(
        { db, clock, crawler, signer, hmac, box, logger: kernel.logger },
        {
          namespace: ns,
          workerId: `${kernel.config.name}:${process.pid}:${ids.uuid4().slice(0, 8)}`,
          batchSize: o.batchSize,
          leaseSeconds: o.leaseSeconds,
          timeoutMs: o.timeoutMs,
          baseDelaySeconds: o.baseDelaySeconds,
          maxDelaySeconds: o.maxDelaySeconds,
          allowHttp: o.allowHttp,
          allowLoopback: o.allowLoopback,
        },
      );
      // A busy outbox is drained batch after batch; an idle one is polled every pollMs.
      kernel.scheduler.add({ name: 'deliver', intervalMs: o.pollMs, run: async () => ((await worker.runOnce()) > 0 ? 'again' : undefined) });
    }
  },
});
