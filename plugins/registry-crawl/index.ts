import * as v from 'valibot';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { definePlugin, optional } from '../../core/plugin.ts';
import type { Deployment } from '../../core/deployment.ts';
import type { Logger } from '../../core/log.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { Database } from '../../core/ports/database.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { RequestSigner, type OutgoingRequest, type RequestSignerPort } from '../../core/ports/request-signer.ts';
import { EventLog } from '../../core/ports/events.ts';
import { RateLimiter } from '../../core/ports/rate-limit.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { AdagentsRecords, BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import { Discovery } from '../../core/ports/discovery.ts';
import { crawlEndpoints } from './endpoints.ts';
import { DEFAULT_SETTINGS, scheduleDue, type JobSettings } from './jobs.ts';
import { CAPABILITY_LIMITS, scheduleAgentChecks } from './agent-capabilities.ts';
import { createSchemaValidator as createDocumentValidator } from '../../lib/registry-documents/schema-validation.ts';
import { runCrawlBatch, type WorkerDeps } from './worker.ts';
import { DEFAULT_ORIGIN } from '../../lib/registry-documents/fetch.ts';

export { crawlDomain } from './pipeline.ts';
export { enqueueCrawl, claimJobs, completeJob, failJob, scheduleDue, findJob, findJobs } from './jobs.ts';
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

type WorkerPorts = Pick<WorkerDeps, 'db' | 'crawler' | 'events' | 'projection' | 'clock' | 'ids' | 'brandRecords' | 'adagentsRecords'>;

function buildWorkerDeps(ports: WorkerPorts & { signer?: RequestSignerPort }, logger: Logger, namespace: string, o: CrawlPluginOptions): WorkerDeps {
  const { signer, ...rest } = ports;
  return {
    ...rest,
    validator: createDocumentValidator(),
    logger,
    origin: o.origin,
    settings: settingsFrom(o),
    namespace,
    // Capability refresh calls are signed when the deployment has a request-signing key.
    agentLimits: { ...CAPABILITY_LIMITS, timeoutMs: o.agentTimeoutMs, ...(signer ? { sign: (r: OutgoingRequest) => signer.sign(r) } : {}) },
  };
}

/** A crawl worker's collaborators from an assembled deployment (the crawl CLI, tests). */
export function workerDeps(deployment: Pick<Deployment, 'get' | 'tryGet' | 'logger' | 'config'>, input: v.InferInput<typeof options> = {}): WorkerDeps {
  const ports: WorkerPorts & { signer?: RequestSignerPort } = {
    db: deployment.get(Database),
    crawler: deployment.get(Crawler),
    events: deployment.get(EventLog),
    projection: deployment.get(Discovery),
    clock: deployment.get(Clock),
    ids: deployment.get(Ids),
    brandRecords: deployment.tryGet(BrandJsonRecords),
    adagentsRecords: deployment.tryGet(AdagentsRecords),
    signer: deployment.tryGet(RequestSigner),
  };
  return buildWorkerDeps(ports, deployment.logger, deployment.config.protocol.namespace, v.parse(options, input));
}

/**
 * The crawl pipeline: durable jobs (claimed with SKIP LOCKED + lease, retried with backoff),
 * adagents.json / brand.json fetch + schema validation + projection with feed events, the
 * scheduled re-crawl on a TTL, the refresh of enrolled agents' capabilities on their own TTL
 * (a second job kind on the same queue), and `POST /api/registry/crawl-request` (+ status).
 * The registry tables belong to registry-agents; the pipeline reaches them through Discovery.
 */
export default definePlugin({
  name: 'registry-crawl',
  deps: {
    db: Database,
    crawler: Crawler,
    events: EventLog,
    limiter: RateLimiter,
    projection: Discovery,
    clock: Clock,
    ids: Ids,
    endpoints: Endpoints,
    brandRecords: optional(BrandJsonRecords),
    adagentsRecords: optional(AdagentsRecords),
    signer: optional(RequestSigner),
  },
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init(d, kernel) {
    const o = kernel.options;
    const settings = settingsFrom(o);
    const deps = buildWorkerDeps(d, kernel.logger, kernel.config.protocol.namespace, o);
    d.endpoints.add(...crawlEndpoints({ db: d.db, crawler: d.crawler, limiter: d.limiter, clock: d.clock, ids: d.ids, settings }));
    if (o.workers > 0) {
      const worker = `${o.workerName ?? `${hostname()}:${process.pid}`}:${crypto.randomUUID().slice(0, 8)}`;
      // A full batch means more jobs may wait: run again at once.
      kernel.scheduler.add({
        name: 'work',
        intervalMs: o.pollIntervalMs,
        run: async () => ((await runCrawlBatch(deps, worker, o.workers)) > 0 ? 'again' : undefined),
      });
    }
    if (o.scheduleIntervalMs > 0) {
      kernel.scheduler.add({
        name: 'schedule',
        intervalMs: o.scheduleIntervalMs,
        runAtStart: false,
        async run() {
          const publishers = await scheduleDue(d.db, deps);
          if (publishers.length) kernel.logger.info({ queued: publishers.length }, 're-crawl scheduled');
          const agents = await scheduleAgentChecks(d.db, deps);
          if (agents.length) kernel.logger.info({ queued: agents.length }, 'agent capability refresh scheduled');
        },
      });
    }
  },
});
