import type { Queryable } from '../../core/ports/database.ts';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';
import type { WebhookAuth } from '../../core/ports/webhook-outbox.ts';
import type { Json } from '../../core/task.ts';
import type { SalesDeps } from './deps.ts';
import type { BuyRow, ChannelConfig } from './buys/store.ts';

/** Seal the credentials of a registration before it is stored. */
export async function sealChannel<T extends ChannelConfig>(box: SecretBoxPort, config: T): Promise<T> {
  if (!config.authentication) return config;
  return { ...config, authentication: { ...config.authentication, credentials: await box.seal(config.authentication.credentials) } };
}

/** The signing mode is fixed at registration: `authentication` present = legacy, absent = RFC 9421. */
async function authOf(box: SecretBoxPort, config: ChannelConfig): Promise<WebhookAuth> {
  const a = config.authentication;
  if (!a) return { mode: 'rfc9421' };
  const credentials = await box.open(a.credentials);
  return a.schemes[0] === 'HMAC-SHA256' ? { mode: 'hmac', secret: credentials } : { mode: 'bearer', token: credentials };
}

export interface Fire {
  message: string;
  result: Json;
  /** Shown in get_media_buys webhook_activity (reporting and impairment fires). */
  notificationType?: string;
  sequenceNumber?: number;
  /** State-shaped events (impairments): stable across re-emissions. */
  notificationId?: string;
}

/**
 * Queue one fire of a media buy's persistent channel, in the caller's transaction (the state change
 * and its webhook commit together). MCP envelope: `task_id` is the media buy id (a persistent
 * channel outlives any task), `task_type` the operation that registered the channel, `operation_id`
 * echoed as registered (reporting_webhook has none in the schema: the push config's, else the
 * media buy id), `context` of the creating call echoed.
 */
export async function fire(tx: Queryable, deps: SalesDeps, buy: BuyRow, channel: 'push' | 'reporting', f: Fire): Promise<void> {
  const config = channel === 'push' ? buy.push_config : buy.reporting_webhook;
  if (!config) return;
  const key = deps.ids.uuid4();
  const operationId = config.operation_id ?? buy.push_config?.operation_id ?? buy.media_buy_id;
  const envelope: Json = {
    idempotency_key: key,
    task_id: buy.media_buy_id,
    operation_id: operationId,
    task_type: config.registered_by,
    protocol: 'media-buy',
    status: 'completed',
    timestamp: deps.clock.now().toISOString(),
    message: f.message,
  };
  if (f.notificationId) envelope.notification_id = f.notificationId;
  if (config.token) envelope.token = config.token;
  envelope.result = f.result;
  if (buy.context) envelope.context = buy.context;
  await deps.outbox.enqueue(tx, {
    url: config.url,
    auth: await authOf(deps.box, config),
    format: 'mcp',
    idempotencyKey: key,
    body: JSON.stringify(envelope),
    taskId: buy.media_buy_id,
    operationId,
    ...(f.notificationType
      ? {
          activity: {
            owner: buy.owner,
            subject: buy.media_buy_id,
            notificationType: f.notificationType,
            ...(f.sequenceNumber !== undefined ? { sequenceNumber: f.sequenceNumber } : {}),
          },
        }
      : {}),
  });
}
