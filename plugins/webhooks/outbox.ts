import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { WebhookAuth, WebhookDelivery, WebhookOutboxPort } from '../../core/ports/webhook-outbox.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { HmacSignerPort } from '../../core/ports/hmac-signer.ts';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';

export interface OutboxOptions {
  /** Give-up horizon from enqueue (<= 24 h: receivers keep dedup state 24 h). */
  horizonSeconds: number;
}

const invalid = (message: string, field: string) => new ProtocolError('INVALID_REQUEST', message, { field });

/** Checks of the receiver authentication a registration asked for; `field` names where it came from. */
export function checkAuth(auth: WebhookAuth, mutating: boolean, hmac: HmacSignerPort | undefined, field: string): void {
  if (auth.mode === 'hmac') {
    if (!hmac) throw invalid('HMAC-SHA256 webhooks are not enabled on this agent; omit authentication to use signed webhooks', field);
    const problem = hmac.checkSecret(auth.secret);
    if (problem) throw invalid(`${field}.credentials ${problem}`, `${field}.credentials`);
  }
  if (auth.mode === 'bearer') {
    if (mutating) throw invalid('Bearer authentication is refused for mutating callbacks; omit authentication to use signed webhooks', field);
    if (auth.token.length < 16) throw invalid(`${field}.credentials must be at least 16 characters`, `${field}.credentials`);
  }
}

/** Enqueue-time checks of a delivery; bad input is a 400 before anything is written. */
export function checkDelivery(d: WebhookDelivery, hmac?: HmacSignerPort): void {
  let url: URL;
  try {
    url = new URL(d.url);
  } catch {
    throw invalid('push_notification_config.url must be an absolute URL', 'push_notification_config.url');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('push_notification_config.url must be http(s)', 'push_notification_config.url');
  if (!/^[A-Za-z0-9_.:-]{8,255}$/.test(d.idempotencyKey)) throw invalid('idempotency_key must be 8-255 of A-Z a-z 0-9 _ . : -', 'idempotency_key');
  checkAuth(d.auth, !!d.mutating, hmac, 'push_notification_config.authentication');
}

/** The outbox writer: one row per webhook, in the caller's transaction. */
export function createOutbox(deps: { ids: IdsPort; clock: ClockPort; hmac?: HmacSignerPort; box?: SecretBoxPort }, options: OutboxOptions): WebhookOutboxPort {
  return {
    async enqueue(tx: Queryable, d: WebhookDelivery): Promise<string> {
      checkDelivery(d, deps.hmac);
      const id = deps.ids.uuid7();
      const now = deps.clock.now();
      const giveUp = new Date(now.getTime() + options.horizonSeconds * 1000);
      const plain = d.auth.mode === 'hmac' ? d.auth.secret : d.auth.mode === 'bearer' ? d.auth.token : null;
      const credentials = plain !== null && deps.box ? await deps.box.seal(plain) : plain;
      await tx.query(sql`INSERT INTO webhook_outbox
        (id, idempotency_key, url, auth_mode, credentials, format, task_id, operation_id, body, next_attempt_at, give_up_at, created_at, notification_token,
         activity_owner, activity_subject, notification_type, sequence_number)
        VALUES (${id}::uuid, ${d.idempotencyKey}::text, ${d.url}::text, ${d.auth.mode}::text, ${credentials}::text, ${d.format}::text,
          ${d.taskId ?? null}::text, ${d.operationId ?? null}::text, ${d.body}::text, ${now}::timestamptz, ${giveUp}::timestamptz, ${now}::timestamptz, ${d.notificationToken ?? null}::text,
          ${d.activity?.owner ?? null}::text, ${d.activity?.subject ?? null}::text, ${d.activity?.notificationType ?? null}::text, ${d.activity?.sequenceNumber ?? null}::int)`);
      return id;
    },
  };
}
