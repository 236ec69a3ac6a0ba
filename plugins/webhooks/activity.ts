import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { WebhookActivityPort, WebhookActivityRecord } from '../../core/ports/webhook-activity.ts';

interface Row {
  subject: string;
  idempotency_key: string;
  url: string;
  notification_type: string;
  sequence_number: number | null;
  created_at: Date | string;
  size: number;
  attempt: number | null;
  status: WebhookActivityRecord['status'] | null;
  http_status_code: number | null;
  error_message: string | null;
  started_at: Date | string | null;
  finished_at: Date | string | null;
}

/** Query string and fragment may carry the receiver's secrets: never shown. */
function bareUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.origin}${url.pathname}`;
  } catch {
    return raw.replace(/[?#].*$/, '');
  }
}

/** WebhookActivity over the outbox and its attempt log. */
export function createWebhookActivity(db: Queryable): WebhookActivityPort {
  return {
    async recent(owner, subjects, limit) {
      const out = new Map<string, WebhookActivityRecord[]>(subjects.map((s) => [s, []]));
      if (subjects.length === 0) return out;
      // The newest `limit` fires per subject hold at least its newest `limit` attempt records.
      const rows = await db.query<Row>(sql`
        WITH fires AS (
          SELECT o.*, row_number() OVER (PARTITION BY o.activity_subject ORDER BY o.created_at DESC, o.id DESC) AS rn
          FROM webhook_outbox o
          WHERE o.activity_owner = ${owner}::text AND o.activity_subject = ANY(${[...subjects]}::text[]))
        SELECT f.activity_subject AS subject, f.idempotency_key, f.url, f.notification_type, f.sequence_number, f.created_at,
               octet_length(f.body) AS size, a.attempt, a.status, a.http_status_code, a.error_message, a.started_at, a.finished_at
        FROM fires f LEFT JOIN webhook_delivery_attempts a ON a.outbox_id = f.id
        WHERE f.rn <= ${limit}::int
        ORDER BY f.activity_subject, COALESCE(a.started_at, f.created_at) DESC, f.created_at DESC, f.id DESC, a.attempt DESC NULLS LAST`);
      for (const r of rows) {
        const list = out.get(r.subject)!;
        if (list.length >= limit) continue;
        const record: WebhookActivityRecord = {
          idempotencyKey: r.idempotency_key,
          url: bareUrl(r.url),
          notificationType: r.notification_type,
          attempt: r.attempt ?? 1,
          status: r.status ?? 'pending',
          httpStatusCode: r.http_status_code ?? null,
          errorMessage: r.error_message ?? null,
          firedAt: new Date(r.started_at ?? r.created_at),
          completedAt: r.finished_at ? new Date(r.finished_at) : null,
          payloadSizeBytes: Number(r.size),
        };
        if (r.sequence_number !== null) record.sequenceNumber = Number(r.sequence_number);
        list.push(record);
      }
      return out;
    },
  };
}
