import { token } from '../token.ts';
import type { Queryable } from './database.ts';

/** How the receiver authenticates our webhooks, fixed at registration (`authentication` present = legacy). */
export type WebhookAuth = { mode: 'rfc9421' } | { mode: 'hmac'; secret: string } | { mode: 'bearer'; token: string };

/** One webhook to deliver. `body` is sent byte for byte on every attempt; `idempotencyKey` never changes. */
export interface WebhookDelivery {
  url: string;
  auth: WebhookAuth;
  format: 'mcp' | 'a2a';
  idempotencyKey: string;
  body: string;
  taskId?: string;
  operationId?: string;
  /** A2A registrations: echoed in `X-A2A-Notification-Token` so the receiver can match its registration. */
  notificationToken?: string;
  /** Mutating callbacks refuse Bearer (no body integrity). */
  mutating?: boolean;
  /**
   * Record the fire for WebhookActivity reads: who may read it (`owner`), what it is about
   * (`subject`, e.g. a media buy id) and the notification it carries.
   */
  activity?: { owner: string; subject: string; notificationType: string; sequenceNumber?: number };
}

/**
 * The durable webhook outbox: `enqueue` writes inside the caller's transaction, so the webhook
 * exists exactly when the state change that causes it commits; workers deliver it at least once,
 * retrying failed attempts with the same bytes. A registration delivery would refuse (not an http(s)
 * URL, a malformed idempotency key, a weak HMAC secret, a short Bearer token, Bearer on a mutating
 * callback) is refused at enqueue with ProtocolError INVALID_REQUEST naming the field, and nothing
 * is written. Contract: test/contract/webhook-outbox.contract.ts.
 */
export interface WebhookOutboxPort {
  enqueue(tx: Queryable, delivery: WebhookDelivery): Promise<string>;
}

export const WebhookOutbox = token<WebhookOutboxPort>('core.webhook-outbox');
