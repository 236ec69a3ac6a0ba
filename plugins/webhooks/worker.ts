import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { SignerPort } from '../../core/ports/signer.ts';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';
import type { HmacSignerPort } from '../../core/ports/hmac-signer.ts';
import { CrawlerError, type CrawlerPort } from '../../core/ports/crawler.ts';
import type { Logger } from '../../core/log.ts';
import { signWebhook } from '../../lib/rfc9421/sign.ts';

export interface WorkerOptions {
  namespace: string;
  workerId: string;
  batchSize: number;
  /** A claimed row is ours until then; a killed worker's rows are reclaimed after it. */
  leaseSeconds: number;
  timeoutMs: number;
  baseDelaySeconds: number;
  maxDelaySeconds: number;
  /** Allow http:// targets (loopback tests only; the crawler's allowlist still applies). */
  allowHttp: boolean;
  /** Development setting: loopback targets (and plain http to them) are reachable. */
  allowLoopback?: boolean;
}

interface Claimed {
  id: string;
  url: string;
  auth_mode: 'rfc9421' | 'hmac' | 'bearer';
  credentials: string | null;
  body: string;
  attempts: number;
  give_up_at: Date;
  notification_token: string | null;
}

type AttemptStatus = 'success' | 'failed' | 'timeout' | 'connection_error' | 'blocked';
interface Outcome {
  status: AttemptStatus;
  httpStatus?: number;
  error?: string;
  /** No point retrying (refused by the SSRF guard, malformed URL). */
  permanent?: boolean;
}

/** Exponential backoff with full-range jitter in [50%, 100%] of the step. */
export function backoffSeconds(attempt: number, base: number, max: number, random = Math.random): number {
  const step = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
  return step * (0.5 + random() * 0.5);
}

export interface WorkerDeps {
  db: DatabasePort;
  clock: ClockPort;
  crawler: CrawlerPort;
  signer?: SignerPort;
  hmac?: HmacSignerPort;
  /** Opens credentials sealed at enqueue. */
  box?: SecretBoxPort;
  logger?: Logger;
}

/**
 * Delivery workers: claim due rows with FOR UPDATE SKIP LOCKED and a lease, POST each one (signed
 * per attempt: fresh nonce, same body and idempotency key), record the attempt, then mark it
 * delivered or schedule a retry. Any non-2xx (401 included) is transient until the horizon.
 */
export function createDeliveryWorker(deps: WorkerDeps, options: WorkerOptions) {
  const { db, clock } = deps;

  async function claim(): Promise<Claimed[]> {
    const now = clock.now();
    const lease = new Date(now.getTime() + options.leaseSeconds * 1000);
    return db.transaction(async (tx) => {
      const rows = await tx.query<Claimed>(sql`UPDATE webhook_outbox o
        SET status = 'delivering', lease_until = ${lease}::timestamptz, lease_owner = ${options.workerId}::text, attempts = o.attempts + 1
        WHERE o.id IN (
          SELECT id FROM webhook_outbox
          WHERE (status = 'pending' AND next_attempt_at <= ${now}::timestamptz)
             OR (status = 'delivering' AND lease_until < ${now}::timestamptz)
          ORDER BY next_attempt_at
          LIMIT ${options.batchSize}::int
          FOR UPDATE SKIP LOCKED)
        RETURNING o.id, o.url, o.auth_mode, o.credentials, o.body, o.attempts, o.give_up_at, o.notification_token`);
      if (rows.length === 0) return rows;
      const ids = rows.map((r) => r.id);
      // Attempts left pending by a worker that died mid-delivery: their outcome is unknown.
      await tx.query(sql`UPDATE webhook_delivery_attempts SET status = 'failed', error_message = 'interrupted: the worker stopped before the outcome was known', finished_at = ${now}::timestamptz
        WHERE outbox_id = ANY(${ids}::uuid[]) AND status = 'pending'`);
      for (const r of rows) {
        await tx.query(sql`INSERT INTO webhook_delivery_attempts (outbox_id, attempt, status, started_at)
          VALUES (${r.id}::uuid, ${r.attempts}::int, 'pending', ${now}::timestamptz) ON CONFLICT (outbox_id, attempt) DO NOTHING`);
      }
      return rows;
    });
  }

  async function headersFor(row: Claimed, body: Uint8Array): Promise<Record<string, string>> {
    const credentials = row.credentials !== null && deps.box ? await deps.box.open(row.credentials) : row.credentials;
    if (row.auth_mode === 'rfc9421') {
      if (!deps.signer) throw new Error('no signer plugin: RFC 9421 webhooks cannot be signed');
      return signWebhook({ key: deps.signer.active(), namespace: options.namespace, url: row.url, body, now: clock.now() });
    }
    if (row.auth_mode === 'hmac') {
      if (!deps.hmac) throw new Error('no HMAC signer plugin: legacy HMAC webhooks cannot be signed');
      return { 'Content-Type': 'application/json', ...deps.hmac.sign(credentials!, body, Math.floor(clock.now().getTime() / 1000)) };
    }
    return { 'Content-Type': 'application/json', Authorization: `Bearer ${credentials}` };
  }

  async function attempt(row: Claimed): Promise<Outcome> {
    const body = new TextEncoder().encode(row.body);
    let headers: Record<string, string>;
    try {
      headers = await headersFor(row, body);
      if (row.notification_token) headers['X-A2A-Notification-Token'] = row.notification_token;
    } catch (error) {
      return { status: 'failed', error: `cannot sign: ${(error as Error).message}`, permanent: error instanceof Error && error.name === 'TargetUriError' };
    }
    try {
      const res = await deps.crawler.fetch(row.url, {
        method: 'POST',
        headers,
        body,
        timeoutMs: options.timeoutMs,
        maxRedirects: 0,
        maxBytes: 64 * 1024,
        // http is still refused unless the target is loopback (or allowlisted).
        requireHttps: !options.allowHttp && !options.allowLoopback,
        allowLoopback: options.allowLoopback,
      });
      if (res.status >= 200 && res.status < 300) return { status: 'success', httpStatus: res.status };
      return { status: 'failed', httpStatus: res.status, error: `HTTP ${res.status}` };
    } catch (error) {
      if (error instanceof CrawlerError) {
        if (error.code === 'timeout') return { status: 'timeout', error: error.message };
        if (error.code === 'connection_failed' || error.code === 'dns_failed') return { status: 'connection_error', error: error.message };
        // Refused by the SSRF guard (or an http URL without allowHttp): retrying cannot help.
        if (error.code === 'ssrf_blocked' || error.code === 'invalid_url')
          return { status: 'blocked', error: `${error.code}: ${error.message}`, permanent: true };
        return { status: 'failed', error: `${error.code}: ${error.message}` };
      }
      return { status: 'connection_error', error: (error as Error).message };
    }
  }

  async function settle(row: Claimed, outcome: Outcome): Promise<void> {
    const now = clock.now();
    await db.transaction(async (tx) => {
      await tx.query(sql`UPDATE webhook_delivery_attempts SET status = ${outcome.status}::text, http_status_code = ${outcome.httpStatus ?? null}::int,
          error_message = ${outcome.error?.slice(0, 500) ?? null}::text, finished_at = ${now}::timestamptz
        WHERE outbox_id = ${row.id}::uuid AND attempt = ${row.attempts}::int`);
      if (outcome.status === 'success') {
        await tx.query(sql`UPDATE webhook_outbox SET status = 'delivered', delivered_at = ${now}::timestamptz, lease_until = NULL, last_error = NULL
          WHERE id = ${row.id}::uuid AND lease_owner = ${options.workerId}::text`);
        return;
      }
      const next = new Date(now.getTime() + backoffSeconds(row.attempts, options.baseDelaySeconds, options.maxDelaySeconds) * 1000);
      const giveUp = outcome.permanent || next > new Date(row.give_up_at);
      await tx.query(sql`UPDATE webhook_outbox SET status = ${giveUp ? 'failed' : 'pending'}::text, next_attempt_at = ${next}::timestamptz,
          lease_until = NULL, last_error = ${outcome.error?.slice(0, 500) ?? null}::text
        WHERE id = ${row.id}::uuid AND lease_owner = ${options.workerId}::text`);
    });
  }

  /** Claim and deliver one batch; returns how many rows were attempted. */
  async function runOnce(): Promise<number> {
    const rows = await claim();
    await Promise.all(
      rows.map(async (row) => {
        const outcome = await attempt(row);
        if (outcome.status === 'blocked') {
          // Typically a loopback or private receiver during local testing: say so, it is not retried.
          deps.logger?.warn({ outbox_id: row.id, url: row.url, error: outcome.error }, 'webhook delivery refused by the outbound guard; not retried');
        }
        await settle(row, outcome);
      }),
    );
    return rows.length;
  }

  return { runOnce };
}
