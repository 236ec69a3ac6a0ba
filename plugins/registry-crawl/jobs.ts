import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { DiscoveryPort } from '../../core/ports/discovery.ts';

/** `publisher`: crawl a domain's adagents.json / brand.json. `agent_capabilities`: refresh an enrolled agent's capabilities. */
export type JobKind = 'publisher' | 'agent_capabilities';

export interface CrawlJob {
  id: string;
  kind: JobKind;
  /** The publisher domain, or the agent URL of an agent_capabilities job. */
  domain: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  reason: string;
  requested_by: string | null;
  attempts: number;
  max_attempts: number;
  run_after: string;
  lease_until: string | null;
  worker: string | null;
  result: unknown;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface JobSettings {
  maxAttempts: number;
  leaseMs: number;
  /** First retry delay; doubles each attempt up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Re-crawl every known publisher this long after its last crawl. */
  ttlMs: number;
  /** Refresh an enrolled agent's capabilities once they are this old. */
  agentTtlMs: number;
}

export const DEFAULT_SETTINGS: JobSettings = {
  maxAttempts: 5,
  leaseMs: 120_000,
  backoffMs: 30_000,
  maxBackoffMs: 3_600_000,
  ttlMs: 24 * 3_600_000,
  agentTtlMs: 24 * 3_600_000,
};

const COLUMNS = sql`id::text, kind, domain, status, reason, requested_by, attempts, max_attempts, run_after, lease_until, worker, result, last_error, created_at, finished_at`;
const at = (clock: ClockPort, plusMs = 0) => new Date(clock.now().getTime() + plusMs);

/**
 * Queue a crawl of `domain`, or join the job already open for it (one open job per domain).
 * Returns the job id and whether a new job was created.
 */
export async function enqueueCrawl(
  db: Queryable,
  deps: { clock: ClockPort; ids: IdsPort; settings: JobSettings },
  input: { domain: string; reason: 'request' | 'schedule' | 'cli'; requestedBy?: string | null; kind?: JobKind },
): Promise<{ id: string; created: boolean }> {
  const kind = input.kind ?? 'publisher';
  const now = at(deps.clock);
  const id = deps.ids.uuid7();
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await db.query<{ id: string }>(sql`
      INSERT INTO crawl_jobs (id, kind, domain, status, reason, requested_by, max_attempts, run_after, created_at, updated_at)
      VALUES (${id}::uuid, ${kind}::text, ${input.domain}::text, 'queued', ${input.reason}::text, ${input.requestedBy ?? null}::text,
        ${deps.settings.maxAttempts}::int, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz)
      ON CONFLICT (kind, domain) WHERE status IN ('queued', 'running') DO NOTHING
      RETURNING id::text`);
    if (inserted[0]) return { id: inserted[0].id, created: true };
    const [open] = await db.query<{ id: string }>(
      sql`SELECT id::text FROM crawl_jobs WHERE kind = ${kind}::text AND domain = ${input.domain}::text AND status IN ('queued', 'running')`,
    );
    // The open job may have finished between the two statements: try again.
    if (open) return { id: open.id, created: false };
  }
  throw new Error(`could not enqueue a crawl of ${input.domain}`);
}

/**
 * Claim up to `limit` runnable jobs for `worker`: queued ones that are due, and running ones whose
 * lease ran out (their worker died). SKIP LOCKED lets concurrent claimers take disjoint jobs; the
 * attempt counter doubles as a fencing token for complete/fail.
 */
export async function claimJobs(
  db: DatabasePort,
  deps: { clock: ClockPort; settings: JobSettings },
  worker: string,
  limit: number,
  kinds: readonly JobKind[] = ['publisher', 'agent_capabilities'],
): Promise<CrawlJob[]> {
  const now = at(deps.clock);
  return db.transaction(async (tx) => {
    await tx.query(sql`
      UPDATE crawl_jobs SET status = 'failed', last_error = coalesce(last_error, 'worker lease expired') || ' (attempts exhausted)',
        finished_at = ${now}::timestamptz, updated_at = ${now}::timestamptz, lease_until = NULL
      WHERE status = 'running' AND lease_until < ${now}::timestamptz AND attempts >= max_attempts`);
    return tx.query<CrawlJob>(sql`
      UPDATE crawl_jobs j SET status = 'running', attempts = j.attempts + 1, worker = ${worker}::text,
        lease_until = ${at(deps.clock, deps.settings.leaseMs)}::timestamptz, updated_at = ${now}::timestamptz
      FROM (
        SELECT id FROM crawl_jobs
        WHERE ((status = 'queued' AND run_after <= ${now}::timestamptz) OR (status = 'running' AND lease_until < ${now}::timestamptz))
          AND attempts < max_attempts AND kind = ANY(${kinds}::text[])
        ORDER BY run_after, id
        LIMIT ${limit}::int
        FOR UPDATE SKIP LOCKED
      ) claimed
      WHERE j.id = claimed.id
      RETURNING j.id::text, j.kind, j.domain, j.status, j.reason, j.requested_by, j.attempts, j.max_attempts, j.run_after, j.lease_until, j.worker, j.result, j.last_error, j.created_at, j.finished_at`);
  });
}

/** Record success; false when this worker no longer holds the job (its lease was taken over). */
export async function completeJob(db: DatabasePort, deps: { clock: ClockPort; settings: JobSettings }, job: CrawlJob, result: unknown): Promise<boolean> {
  const now = at(deps.clock);
  return db.transaction(async (tx) => {
    const done = await tx.query(sql`
      UPDATE crawl_jobs SET status = 'done', result = ${result}::jsonb, lease_until = NULL, finished_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
      WHERE id = ${job.id}::uuid AND status = 'running' AND worker = ${job.worker}::text AND attempts = ${job.attempts}::int
      RETURNING id`);
    if (done.length) await touchTarget(tx, job, now, deps.settings, 'done', result);
    return done.length > 0;
  });
}

/** Record a failure: back to the queue after a doubling delay, or `failed` once attempts are spent. */
export async function failJob(
  db: DatabasePort,
  deps: { clock: ClockPort; settings: JobSettings },
  job: CrawlJob,
  error: string,
): Promise<'retry' | 'failed' | 'lost'> {
  const now = at(deps.clock);
  const s = deps.settings;
  const delay = Math.min(s.maxBackoffMs, s.backoffMs * 2 ** Math.max(0, job.attempts - 1));
  const final = job.attempts >= job.max_attempts;
  return db.transaction(async (tx) => {
    const rows = await tx.query(sql`
      UPDATE crawl_jobs SET status = ${final ? 'failed' : 'queued'}::text, last_error = ${error.slice(0, 2000)}::text, lease_until = NULL,
        run_after = ${at(deps.clock, final ? 0 : delay)}::timestamptz, updated_at = ${now}::timestamptz,
        finished_at = ${final ? now : null}::timestamptz
      WHERE id = ${job.id}::uuid AND status = 'running' AND worker = ${job.worker}::text AND attempts = ${job.attempts}::int
      RETURNING id`);
    if (!rows.length) return 'lost';
    if (final) await touchTarget(tx, job, now, s, 'failed', { error });
    return final ? 'failed' : 'retry';
  });
}

/** Record when the job's target is due again and how this run ended (per kind: crawl_targets or crawl_agent_targets). */
async function touchTarget(tx: Queryable, job: CrawlJob, now: Date, settings: JobSettings, outcome: 'done' | 'failed', result: unknown): Promise<void> {
  if (job.kind === 'agent_capabilities') {
    const r = (result ?? {}) as { status?: string; error?: string };
    const verdict = outcome === 'failed' ? 'failed' : (r.status ?? 'done');
    const error = verdict === 'failed' || verdict === 'error' ? String(r.error ?? 'unknown error').slice(0, 2000) : null;
    await touchAgentTarget(tx, job.domain, now, new Date(now.getTime() + settings.agentTtlMs), verdict, error);
    return;
  }
  const next = new Date(now.getTime() + settings.ttlMs);
  const domain = job.domain;
  await tx.query(sql`
    INSERT INTO crawl_targets (domain, next_crawl_at, last_crawled_at, last_outcome)
    VALUES (${domain}::text, ${next}::timestamptz, ${now}::timestamptz, ${outcome}::text)
    ON CONFLICT (domain) DO UPDATE SET next_crawl_at = EXCLUDED.next_crawl_at, last_crawled_at = EXCLUDED.last_crawled_at, last_outcome = EXCLUDED.last_outcome`);
}

async function touchAgentTarget(tx: Queryable, agentUrl: string, now: Date, next: Date, outcome: string, error: string | null): Promise<void> {
  const failed = error !== null;
  await tx.query(sql`
    INSERT INTO crawl_agent_targets (agent_url, next_check_at, last_checked_at, last_outcome, last_error, consecutive_failures)
    VALUES (${agentUrl}::text, ${next}::timestamptz, ${now}::timestamptz, ${outcome}::text, ${error}::text, ${failed ? 1 : 0}::int)
    ON CONFLICT (agent_url) DO UPDATE SET next_check_at = EXCLUDED.next_check_at, last_checked_at = EXCLUDED.last_checked_at,
      last_outcome = EXCLUDED.last_outcome, last_error = EXCLUDED.last_error,
      consecutive_failures = CASE WHEN ${failed}::boolean THEN crawl_agent_targets.consecutive_failures + 1 ELSE 0 END`);
}

/**
 * The scheduled re-crawl: every publisher the registry knows becomes a target, and every target
 * whose TTL ran out gets a job (its next time is pushed one TTL ahead at once, so several
 * schedulers never queue it twice). Returns the domains queued.
 */
export async function scheduleDue(
  db: DatabasePort,
  deps: { clock: ClockPort; ids: IdsPort; settings: JobSettings; projection: Pick<DiscoveryPort, 'publishers'> },
  limit = 1000,
): Promise<string[]> {
  const now = at(deps.clock);
  const publishers = (await deps.projection.publishers()).map((p) => ({
    domain: p.domain,
    next: new Date((p.lastValidated ?? now).getTime() + deps.settings.ttlMs),
  }));
  return db.transaction(async (tx) => {
    if (publishers.length) {
      await tx.query(sql`
        INSERT INTO crawl_targets (domain, next_crawl_at)
        SELECT r.domain, r.next FROM jsonb_to_recordset(${publishers}::jsonb) AS r(domain text, next timestamptz)
        ON CONFLICT (domain) DO NOTHING`);
    }
    const due = await tx.query<{ domain: string }>(sql`
      UPDATE crawl_targets SET next_crawl_at = ${at(deps.clock, deps.settings.ttlMs)}::timestamptz
      WHERE domain IN (
        SELECT domain FROM crawl_targets WHERE next_crawl_at <= ${now}::timestamptz ORDER BY next_crawl_at LIMIT ${limit}::int FOR UPDATE SKIP LOCKED
      )
      RETURNING domain`);
    for (const { domain } of due) await enqueueCrawl(tx, deps, { domain, reason: 'schedule' });
    return due.map((d) => d.domain);
  });
}

/** Several jobs by id (those that exist), e.g. to follow a batch the caller enqueued. */
export async function findJobs(db: Queryable, ids: readonly string[]): Promise<CrawlJob[]> {
  return db.query<CrawlJob>(sql`SELECT ${COLUMNS} FROM crawl_jobs WHERE id = ANY(${ids}::uuid[])`);
}

export async function findJob(db: Queryable, id: string): Promise<CrawlJob | null> {
  const [row] = await db.query<CrawlJob>(sql`SELECT ${COLUMNS} FROM crawl_jobs WHERE id = ${id}::uuid`);
  return row ?? null;
}
