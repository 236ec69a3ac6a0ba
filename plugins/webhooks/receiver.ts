import { timingSafeEqual, createHash } from 'node:crypto';
import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { HmacSignerPort } from '../../core/ports/hmac-signer.ts';
import type { ReceivedWebhook } from '../../core/ports/webhook-inbox.ts';
import { precheck, type WebhookRequest, type WebhookVerifier } from '../../lib/rfc9421/verify.ts';
import { parseStrictJsonBytes, StrictJsonError } from '../../lib/strict-json.ts';
import { TASK_STATUSES } from './envelopes.ts';
import { fieldPath, findUnsafeInput } from '../../core/validation.ts';

/** How one receiving endpoint was registered with the sender: the mode is fixed, never negotiated. */
export type ReceiverRegistration =
  | { mode: 'rfc9421' }
  | { mode: 'hmac'; sender: string; secrets: readonly string[] }
  | { mode: 'bearer'; sender: string; token: string };

export interface ReceiverOptions {
  namespace: string;
  /** Dedup retention (>= 24 h). */
  dedupSeconds?: number;
  /** Live dedup entries per sender before answering 429. */
  perSenderCap?: number;
  maxBodyBytes?: number;
}

export interface ReceiveResult {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
  event?: ReceivedWebhook;
  duplicate?: boolean;
}

const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:-]{8,255}$/;
const reject = (status: number, code: string, message: string, scheme?: string): ReceiveResult => ({
  status,
  body: { error: code, message },
  headers: scheme ? { 'www-authenticate': `${scheme} error="${code}"` } : {},
});

function sameSecret(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** MCP envelope (string status + task_id) or A2A Task / status update (object status with state). */
export function detectFormat(payload: unknown): 'mcp' | 'a2a' | null {
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return null;
  const p = payload as Record<string, any>;
  if (typeof p.status === 'string' && typeof p.task_id === 'string') return 'mcp';
  if (p.status && typeof p.status === 'object' && typeof p.status.state === 'string') return 'a2a';
  return null;
}

/**
 * The receive side, usable as a library (`receive`) or behind the plugin's endpoint: checks size and
 * content type, authenticates in the registered mode only (a request in another mode is
 * `webhook_mode_mismatch`), detects the envelope format, and dedups on (sender, idempotency_key)
 * in the database. Duplicates are answered 200, never 409.
 */
export function createWebhookReceiver(
  deps: {
    db: DatabasePort;
    clock: ClockPort;
    verifier: WebhookVerifier;
    hmac?: HmacSignerPort;
    senderOf?: (keyid: string, jwk: Record<string, unknown>) => string;
  },
  options: ReceiverOptions,
) {
  const dedupMs = Math.max(options.dedupSeconds ?? 86_400 + 3600, 86_400) * 1000;
  const cap = options.perSenderCap ?? 100_000;
  const ns = options.namespace;

  async function authenticate(req: WebhookRequest, reg: ReceiverRegistration): Promise<{ sender: string; payload: unknown } | ReceiveResult> {
    const hasSignature = req.headers.has('signature') || req.headers.has('signature-input');
    const hasHmac = req.headers.has(`x-${ns}-signature`) || req.headers.has(`x-${ns}-timestamp`);
    const mismatch = reject(401, 'webhook_mode_mismatch', `this endpoint was registered for ${reg.mode} webhooks`, 'Signature');
    if (reg.mode === 'rfc9421') {
      if (hasHmac) return mismatch;
      const result = await deps.verifier(req);
      if (!result.ok) return reject(result.status, result.code, result.message, result.status === 401 ? 'Signature' : undefined);
      const sender = deps.senderOf?.(result.keyid, result.jwk) ?? (typeof result.jwk.sender === 'string' ? result.jwk.sender : `keyid:${result.keyid}`);
      return { sender, payload: result.payload };
    }
    if (hasSignature || (reg.mode === 'bearer' && hasHmac)) return mismatch;
    if (reg.mode === 'hmac') {
      if (!deps.hmac) return reject(500, 'hmac_not_enabled', 'HMAC verification is not configured');
      const v = deps.hmac.verify(reg.secrets, req.body, req.headers, Math.floor(deps.clock.now().getTime() / 1000));
      if (!v.ok) return reject(401, v.code, 'HMAC signature check failed', 'HMAC-SHA256');
    } else {
      const auth = req.headers.get('authorization') ?? '';
      const m = /^Bearer (.+)$/.exec(auth);
      if (!m || !sameSecret(m[1]!, reg.token)) return reject(401, 'webhook_bearer_invalid', 'missing or wrong bearer token', 'Bearer');
    }
    try {
      return { sender: reg.sender, payload: parseStrictJsonBytes(req.body) };
    } catch (error) {
      if (error instanceof StrictJsonError) return reject(401, 'webhook_body_malformed', error.message, reg.mode === 'hmac' ? 'HMAC-SHA256' : 'Bearer');
      throw error;
    }
  }

  async function receive(
    req: WebhookRequest,
    reg: ReceiverRegistration,
    endpoint = 'default',
    handle?: (tx: Queryable, event: ReceivedWebhook) => Promise<void>,
  ): Promise<ReceiveResult> {
    const pre = precheck(req, options.maxBodyBytes);
    if (pre) return reject(pre.status, pre.code, pre.message);
    const auth = await authenticate(req, reg);
    if ('status' in auth) return auth;
    const { sender, payload } = auth;
    // Authenticated is not harmless: text the database cannot store is refused, naming the member.
    const unsafe = findUnsafeInput(payload);
    if (unsafe) {
      return reject(400, 'invalid_payload', `${fieldPath(unsafe.path, '') || 'body'}: ${unsafe.problem}`);
    }
    const format = detectFormat(payload);
    if (!format) return reject(400, 'invalid_envelope', 'expected an MCP envelope (status string + task_id) or an A2A Task/status update');
    const p = payload as Record<string, any>;
    let key: string;
    let notificationId: string | null = null;
    if (format === 'mcp') {
      if (typeof p.idempotency_key !== 'string' || !IDEMPOTENCY_KEY.test(p.idempotency_key)) {
        return reject(400, 'missing_idempotency_key', 'idempotency_key is required (8-255 of A-Z a-z 0-9 _ . : -)');
      }
      if (!(TASK_STATUSES as readonly string[]).includes(p.status))
        return reject(400, 'invalid_envelope_status', `status must be one of ${TASK_STATUSES.join(', ')}`);
      key = p.idempotency_key;
      const nid = p.result?.notification_id ?? p.notification_id;
      if (typeof nid === 'string') notificationId = nid;
    } else {
      const metaKey = p.metadata?.idempotency_key;
      key =
        typeof metaKey === 'string' && IDEMPOTENCY_KEY.test(metaKey)
          ? metaKey
          : `a2a:${createHash('sha256')
              .update(JSON.stringify([p.id ?? p.taskId, p.status.state, p.status.timestamp ?? null]))
              .digest('hex')}`;
    }
    const taskId = format === 'mcp' ? p.task_id : (p.id ?? p.taskId ?? null);
    const now = deps.clock.now();
    const expires = new Date(now.getTime() + dedupMs);

    return deps.db.transaction(async (tx): Promise<ReceiveResult> => {
      const [existing] = await tx.query(
        sql`SELECT 1 FROM webhook_received WHERE sender = ${sender}::text AND idempotency_key = ${key}::text AND expires_at > ${now}::timestamptz`,
      );
      if (existing) return { status: 200, body: { status: 'duplicate' }, headers: {}, duplicate: true };
      const [live] = await tx.query<{ n: number }>(
        sql`SELECT count(*)::int AS n FROM webhook_received WHERE sender = ${sender}::text AND expires_at > ${now}::timestamptz`,
      );
      if ((live?.n ?? 0) >= cap) {
        const r = reject(429, 'rate_limited', 'too many distinct webhooks from this sender are retained; retry later');
        return { ...r, headers: { 'retry-after': '60' } };
      }
      let reemission = false;
      if (notificationId) {
        const [seen] = await tx.query(sql`SELECT 1 FROM webhook_received WHERE sender = ${sender}::text AND notification_id = ${notificationId}::text
          AND idempotency_key <> ${key}::text AND expires_at > ${now}::timestamptz`);
        reemission = !!seen;
      }
      const inserted = await tx.query(sql`INSERT INTO webhook_received (sender, idempotency_key, format, task_id, notification_id, received_at, expires_at)
        VALUES (${sender}::text, ${key}::text, ${format}::text, ${taskId}::text, ${notificationId}::text, ${now}::timestamptz, ${expires}::timestamptz)
        ON CONFLICT (sender, idempotency_key) DO UPDATE SET received_at = EXCLUDED.received_at, expires_at = EXCLUDED.expires_at,
          format = EXCLUDED.format, task_id = EXCLUDED.task_id, notification_id = EXCLUDED.notification_id
        WHERE webhook_received.expires_at <= ${now}::timestamptz
        RETURNING sender`);
      // Lost a race with a concurrent delivery of the same event: that one is processing it.
      if (inserted.length === 0) return { status: 200, body: { status: 'duplicate' }, headers: {}, duplicate: true };
      const event: ReceivedWebhook = { sender, format, idempotencyKey: key, payload: p, reemission, endpoint };
      await handle?.(tx, event);
      return { status: 200, body: { status: 'accepted', ...(reemission ? { reemission: true } : {}) }, headers: {}, event };
    });
  }

  return { receive };
}

export function toResponse(r: ReceiveResult): Response {
  return new Response(JSON.stringify(r.body), { status: r.status, headers: { 'content-type': 'application/json', ...r.headers } });
}

export async function purgeReceived(db: Queryable, now: Date): Promise<void> {
  await db.query(sql`DELETE FROM webhook_received WHERE expires_at <= ${now}::timestamptz`);
}
