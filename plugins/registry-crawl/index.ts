import * as v from 'valibot';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { definePlugin } from '../../core/plugin.ts';
import { sql } from '../../core/sql.ts';
import type { Token } from '../../core/token.ts';
import type { Logger } from '../../core/log.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { Database } from '../../core/ports/database.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { EventLog } from '../../core/ports/events.ts';
import { RateLimiter } from '../../core/ports/rate-limit.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Search } from '../../core/ports/search.ts';
import { AdagentsRecords, BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import { createDiscoveryProjection, DiscoveryProjection } from '../registry-agents/projection.ts';
import { crawlEndpoints } from './endpoints.ts';
import { DEFAULT_SETTINGS, scheduleDue, type JobSettings } from './jobs.ts';
import { CAPABILITY_LIMITS, scheduleAgentChecks } from './agent-capabilities.ts';
import { createSchemaValidator as createDocumentValidator } from '../registry-agents/schema-validation.ts';
import { startWorker, type WorkerDeps } from './worker.ts';
import { DEFAULT_ORIGIN } from './documents.ts';

export { crawlDomain } from './pipeline.ts';
export { enqueueCrawl, claimJobs, completeJob, failJob, scheduleDue, findJob } from './jobs.ts';
export { scheduleAgentChecks, refreshAgentCapabilities } from './agent-capabilities.ts';
export { runCrawlBatch } from './worker.ts';

const int = (min: number) => v.pipe(v.number(), v.integer(), v.minValue(min));

const options = v.object({
  /** Jobs this instance runs at once; 0 = this instance only queues (another one crawls). */
  workers: v.optional(v.pipe(int(0), v.maxValue(64)), 2),
  pollIntervalMs: v.optional(int(10), 1000),
  /** How often due publishers are queued for re-crawl; 0 = no scheduled re-crawl. */
  scheduleIntervalMs: v.optional(int(0), 60_000),
  /** Re-crawl every known publisher this many seconds after its last crawl (default 24 h). */
  ttlSeconds: v.optional(int(1), DEFAULT_SETTINGS.ttlMs / 1000),
  /** Refresh an enrolled agent's capabilities (get_{ns}_capabilities) once they are this old (default 24 h). */
  agentTtlSeconds: v.optional(int(1), DEFAULT_SETTINGS.agentTtlMs / 1000),
  /** Time limit of each request of a capabilities call (MCP/A2A exchange). */
  agentTimeoutMs: v.optional(v.pipe(int(100), v.maxValue(60_000)), CAPABILITY_LIMITS.timeoutMs),
  maxAttempts: v.optional(v.pipe(int(1), v.maxValue(50)), DEFAULT_SETTINGS.maxAttempts),
  leaseSeconds: v.optional(int(1), DEFAULT_SETTINGS.leaseMs / 1000),
  backoffSeconds: v.optional(int(0), DEFAULT_SETTINGS.backoffMs / 1000),
  /** Where a domain's files are fetched; tests point it at a loopback port. */
  origin: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\/\{domain\}(:\d+)?$/, 'must look like https://{domain} or https://{domain}:8443')), DEFAULT_ORIGIN),
  /** Worker name prefix in job rows (default host:pid). */
  workerName: v.optional(v.string()),
});

export type CrawlPluginOptions = v.InferOutput<typeof options>;

export function settingsFrom(o: CrawlPluginOptions): JobSettings {
  return {
    maxAttempts: o.maxAttempts,
    leaseMs: o.leaseSeconds * 1000,
    backoffMs: o.backoffSeconds * 1000,
    maxBackoffMs: DEFAULT_SETTINGS.maxBackoffMs,
    ttlMs: o.ttlSeconds * 1000,
    agentTtlMs: o.agentTtlSeconds * 1000,
  };
}

interface PortSource {
  get<T>(token: Token<T>): T;
  tryGet<T>(token: Token<T>): T | undefined;
  logger: Logger;
  config: { protocol: { namespace: string } };
}

/** Everything a crawl worker needs, from a deployment (the plugin, the CLI). */
export function workerDeps(source: PortSource, o: CrawlPluginOptions): WorkerDeps {
  const db = source.get(Database);
  return {
    db,
    crawler: source.get(Crawler),
    events: source.get(EventLog),
    projection: source.tryGet(DiscoveryProjection) ?? createDiscoveryProjection(db, () => source.tryGet(Search)),
    validator: createDocumentValidator(),
    brandRecords: source.tryGet(BrandJsonRecords),
    adagentsRecords: source.tryGet(AdagentsRecords),
    clock: source.get(Clock),
    logger: source.logger,
    origin: o.origin,
    ids: source.get(Ids),
    settings: settingsFrom(o),
    namespace: source.config.protocol.namespace,
    agentLimits: { ...CAPABILITY_LIMITS, timeoutMs: o.agentTimeoutMs },
  };
}

const running = new WeakMap<object, Array<() => Promise<void> | void>>();

/**
 * The crawl pipeline: durable jobs (claimed with SKIP LOCKED + lease, retried with backoff),
 * adagents.json / brand.json fetch + schema validation + projection with feed events, the
 * scheduled re-crawl on a TTL, the refresh of enrolled agents' capabilities on their own TTL
 * (a second job kind on the same queue), and `POST /api/registry/crawl-request` (+ status).
 * The registry tables belong to registry-agents (discovery); their projection functions are used
 * directly when that plugin does not provide the DiscoveryProjection service.
 */
export default definePlugin({
  name: 'registry-crawl',
  requires: [Database, Crawler, EventLog, RateLimiter],
  optional: [DiscoveryProjection, Search, BrandJsonRecords, AdagentsRecords],
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  register(ctx) {
    const settings = settingsFrom(ctx.options);
    ctx.get(Endpoints).add(
      ...crawlEndpoints({ db: ctx.get(Database), crawler: ctx.get(Crawler), limiter: ctx.get(RateLimiter), clock: ctx.get(Clock), ids: ctx.get(Ids), settings }),
    );
  },
  async start(ctx) {
    const db = ctx.get(Database);
    const [model] = await db.query<{ present: boolean }>(sql`SELECT to_regclass('registry_publishers') IS NOT NULL AS present`);
    if (!model?.present) ctx.logger.error('registry tables are missing: add the registry-agents plugin (it owns them) or crawls will fail');
    const deps = workerDeps(ctx, ctx.options);
    const stops: Array<() => Promise<void> | void> = [];
    const name = ctx.options.workerName ?? `${hostname()}:${process.pid}`;
    if (ctx.options.workers > 0) {
      const worker = startWorker(deps, { worker: `${name}:${crypto.randomUUID().slice(0, 8)}`, concurrency: ctx.options.workers, pollMs: ctx.options.pollIntervalMs });
      stops.push(() => worker.stop());
    }
    if (ctx.options.scheduleIntervalMs > 0) {
      const timer = setInterval(() => {
        scheduleDue(db, deps)
          .then((queued) => queued.length && ctx.logger.info({ queued: queued.length }, 're-crawl scheduled'))
          .catch((err) => ctx.logger.warn({ err }, 're-crawl scheduling failed'));
        scheduleAgentChecks(db, deps)
          .then((queued) => queued.length && ctx.logger.info({ queued: queued.length }, 'agent capability refresh scheduled'))
          .catch((err) => ctx.logger.warn({ err }, 'agent capability scheduling failed'));
      }, ctx.options.scheduleIntervalMs);
      timer.unref?.();
      stops.push(() => clearInterval(timer));
    }
    running.set(ctx, stops);
  },
  async stop(ctx) {
    for (const stop of running.get(ctx) ?? []) await stop();
    running.delete(ctx);
  },
});
