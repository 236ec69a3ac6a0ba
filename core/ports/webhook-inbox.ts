import { token } from '../token.ts';
import type { Queryable } from './database.ts';

/** A verified, first-seen webhook handed to the features that consume them. */
export interface ReceivedWebhook {
  /** Authenticated sender identity (the dedup scope). */
  sender: string;
  format: 'mcp' | 'a2a';
  idempotencyKey: string;
  payload: Record<string, unknown>;
  /** Same `notification_id` already seen under another idempotency key: a re-emission of a known state. */
  reemission: boolean;
  /** Receiving endpoint name. */
  endpoint: string;
}

/**
 * Receive side of webhooks. Handlers run inside the transaction that records the dedup entry: if a
 * handler throws, nothing is recorded and the sender's retry is processed again.
 */
export interface WebhookInboxPort {
  subscribe(handler: (tx: Queryable, event: ReceivedWebhook) => Promise<void> | void): void;
}

export const WebhookInbox = token<WebhookInboxPort>('core.webhook-inbox');
