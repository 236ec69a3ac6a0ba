import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database, type Queryable } from '../../core/ports/database.ts';
import { Clock, systemClock } from '../../core/ports/clock.ts';
import { Ids, defaultIds } from '../../core/ports/ids.ts';
import { Signer, KeyResolver } from '../../core/ports/signer.ts';
import { HmacSigner } from '../../core/ports/hmac-signer.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { Http } from '../../core/http.ts';
import { WebhookOutbox } from '../../core/ports/webhook-outbox.ts';
import { WebhookInbox, type ReceivedWebhook } from '../../core/ports/webhook-inbox.ts';
import { createOutbox } from './outbox.ts';
import { createTaskNotifier } from './notifier.ts';
import { TaskNotifier } from '../../core/ports/task-notifier.ts';
import { createDeliveryWorker } from './worker.ts';
import { createWebhookVerifier, MAX_WEBHOOK_BYTES } from './rfc9421/verify.ts';
import { createReplayStore, createRevocationList, purgeReplayNonces } from './receiver-stores.ts';
import { createJwksResolver } from './key-resolver.ts';
import { createWebhookReceiver, purgeReceived, toResponse, type ReceiverRegistration } from './receiver.ts';

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

const endpoint = v.variant('mode', [
  v.object({ mode: v.literal('rfc9421') }),
  v.object({ mode: v.literal('hmac'), sender: v.pipe(v.string(), v.minLength(1)), secrets: v.pipe(v.array(v.pipe(v.string(), v.minLength(32))), v.minLength(1), v.maxLength(2)) }),
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
 * Signed webhooks: the durable outbox and its delivery workers (send side) and the verifying,
 * deduplicating receiver endpoint (receive side).
 */
export default definePlugin({
  name: 'webhooks',
  provides: [WebhookOutbox, WebhookInbox, TaskNotifier],
  requires: [Database, Http],
  optional: [Signer, HmacSigner, Crawler, KeyResolver],
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  register(ctx) {
    const db = ctx.get(Database);
    const clock = ctx.tryGet(Clock) ?? systemClock;
    const ids = ctx.tryGet(Ids) ?? defaultIds;
    const ns = ctx.config.protocol.namespace;
    const o = ctx.options.outbox;
    const outbox = createOutbox({ ids, clock, hmac: ctx.tryGet(HmacSigner), box: ctx.get(SecretBox) }, { horizonSeconds: o.horizonHours * 3600 });
    ctx.provide(WebhookOutbox, outbox);
    ctx.provide(TaskNotifier, createTaskNotifier(outbox, ids));

    const handlers: Array<(tx: Queryable, e: ReceivedWebhook) => Promise<void> | void> = [];
    ctx.provide(WebhookInbox, { subscribe: (h) => void handlers.push(h) });

    const r = ctx.options.receiver;
    if (r) {
      const crawler = ctx.tryGet(Crawler);
      const keys =
        ctx.tryGet(KeyResolver) ??
        (crawler ? createJwksResolver({ db, clock, crawler, namespace: ns }, r.senders, { requireHttps: !r.allowHttpKeys }) : { resolve: async () => null });
      const verifier = createWebhookVerifier({
        namespace: ns,
        keys,
        replay: createReplayStore(db),
        revocation: createRevocationList(db, r.revocationStaleSeconds),
        clock,
        perKeyidCap: r.perKeyidCap,
        maxBodyBytes: MAX_WEBHOOK_BYTES,
      });
      const receiver = createWebhookReceiver(
        { db, clock, verifier, hmac: ctx.tryGet(HmacSigner) },
        { namespace: ns, perSenderCap: r.perSenderCap, dedupSeconds: r.dedupHours * 3600 },
      );
      ctx.get(Http).add({
        method: 'POST',
        path: r.path,
        async handle(request, { params }) {
          const name = params.endpoint ?? '';
          const reg = r.endpoints[name] as ReceiverRegistration | undefined;
          if (!reg) return Response.json({ error: 'not_found', message: `No webhook endpoint ${name}` }, { status: 404 });
          const declared = Number(request.headers.get('content-length') ?? 0);
          if (declared > MAX_WEBHOOK_BYTES) return Response.json({ error: 'webhook_payload_too_large', message: 'Webhook body exceeds 1 MB' }, { status: 413 });
          const body = new Uint8Array(await request.arrayBuffer());
          const url = r.publicUrl ? new URL(new URL(request.url).pathname + new URL(request.url).search, r.publicUrl).href : request.url;
          const result = await receiver.receive({ method: request.method, url, headers: request.headers, body }, reg, name, async (tx, event) => {
            for (const h of handlers) await h(tx, event);
          });
          return toResponse(result);
        },
      });
    }

    const crawler = ctx.tryGet(Crawler);
    const worker =
      o.workers && crawler
        ? createDeliveryWorker(
            { db, clock, crawler, signer: ctx.tryGet(Signer), hmac: ctx.tryGet(HmacSigner), box: ctx.get(SecretBox), logger: ctx.logger },
            {
              namespace: ns,
              workerId: `${ctx.config.name}:${process.pid}:${ids.uuid4().slice(0, 8)}`,
              batchSize: o.batchSize,
              leaseSeconds: o.leaseSeconds,
              timeoutMs: o.timeoutMs,
              baseDelaySeconds: o.baseDelaySeconds,
              maxDelaySeconds: o.maxDelaySeconds,
              allowHttp: o.allowHttp,
            },
          )
        : null;
    if (o.workers && !crawler) ctx.logger.warn('no crawler port in this deployment: webhooks are queued but not delivered');
    let janitor: ReturnType<typeof setInterval> | null = null;
    lifecycle.set(ctx, {
      start() {
        worker?.start(o.pollMs);
        janitor = setInterval(() => {
          const now = clock.now();
          void purgeReplayNonces(db, now).catch(() => {});
          void purgeReceived(db, now).catch(() => {});
        }, 60_000);
        janitor.unref?.();
      },
      async stop() {
        if (janitor) clearInterval(janitor);
        await worker?.stop();
      },
    });
  },
  start(ctx) {
    lifecycle.get(ctx)?.start();
  },
  async stop(ctx) {
    await lifecycle.get(ctx)?.stop();
  },
});

// register() builds the worker; start()/stop() run it (the kernel passes the same ctx object).
const lifecycle = new WeakMap<object, { start(): void; stop(): Promise<void> }>();
