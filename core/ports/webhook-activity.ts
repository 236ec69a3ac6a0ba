import { token } from '../token.ts';

/** One delivery attempt of a webhook fire, as a buyer's debug view shows it. */
export interface WebhookActivityRecord {
  idempotencyKey: string;
  /** Target, without query string or fragment. */
  url: string;
  notificationType: string;
  sequenceNumber?: number;
  /** 1 for the first attempt; retries of one fire share the idempotency key. */
  attempt: number;
  status: 'success' | 'failed' | 'timeout' | 'connection_error' | 'pending';
  httpStatusCode: number | null;
  errorMessage: string | null;
  firedAt: Date;
  completedAt: Date | null;
  payloadSizeBytes: number;
}

/**
 * Read side of the webhook outbox for fires enqueued with `activity` (see WebhookDelivery):
 * per subject, the attempt records of its most recent fires for one owner, newest first, at most
 * `limit` records per subject. A fire not attempted yet shows as one `pending` record.
 */
export interface WebhookActivityPort {
  recent(owner: string, subjects: readonly string[], limit: number): Promise<Map<string, WebhookActivityRecord[]>>;
}

export const WebhookActivity = token<WebhookActivityPort>('core.webhook-activity');
