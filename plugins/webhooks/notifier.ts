import type { IdsPort } from '../../core/ports/ids.ts';
import type { TaskNotifierPort, TaskStatusChange } from '../../core/ports/task-notifier.ts';
import type { WebhookAuth, WebhookOutboxPort } from '../../core/ports/webhook-outbox.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { HmacSignerPort } from '../../core/ports/hmac-signer.ts';
import { a2aBody, mcpEnvelope, type StatusChange } from './envelopes.ts';
import { checkAuth } from './outbox.ts';

/** Values of the payload's `protocol` member (AdCP enums/adcp-protocol.json); other groups omit it. */
const PAYLOAD_PROTOCOLS = new Set(['media-buy', 'signals', 'governance', 'creative', 'brand', 'sponsored-intelligence', 'measurement']);

/** The mode is chosen only by `authentication` at registration: absent = RFC 9421. */
export function authOf(
  authentication: { schemes: string[]; credentials?: string } | undefined,
  field = 'push_notification_config.authentication',
): WebhookAuth {
  if (!authentication) return { mode: 'rfc9421' };
  const schemes = authentication.schemes.map((s) => s.toUpperCase());
  const credentials = authentication.credentials ?? '';
  if (schemes.length === 1 && schemes[0] === 'HMAC-SHA256') return { mode: 'hmac', secret: credentials };
  if (schemes.length === 1 && schemes[0] === 'BEARER') return { mode: 'bearer', token: credentials };
  throw new ProtocolError('INVALID_REQUEST', 'authentication.schemes must be ["HMAC-SHA256"] or ["Bearer"] (or omit authentication for signed webhooks)', {
    field: `${field}.schemes`,
  });
}

/**
 * The task lifecycle's notifier: one webhook per status change after the initial response (a
 * terminal initial response creates no task, so it never gets here), written to the outbox in
 * the status change's transaction. Both registrations fire when both exist.
 */
export function createTaskNotifier(outbox: WebhookOutboxPort, ids: IdsPort, hmac: HmacSignerPort | undefined): TaskNotifierPort {
  return {
    checkRegistration({ push, a2a, mutating }) {
      if (push) checkAuth(authOf(push.authentication), mutating, hmac, 'push_notification_config.authentication');
      if (a2a) {
        // A2A-native Bearer registrations are the A2A norm, so the mutating-callback refusal is the AdCP registration's only.
        const field = 'configuration.pushNotificationConfig.authentication';
        checkAuth(authOf(a2a.authentication, field), false, hmac, field);
      }
    },
    async statusChanged(tx, change: TaskStatusChange) {
      if (change.initial) return; // the initial response carries the status inline
      const sc: StatusChange = {
        taskId: change.taskId,
        taskType: change.taskType,
        status: change.status,
        timestamp: new Date(change.timestamp),
        message: change.message ?? undefined,
        result: (change.result ?? undefined) as Record<string, unknown> | undefined,
        contextId: change.contextId,
      };
      const pnc = change.pushNotificationConfig;
      if (pnc) {
        const key = ids.uuid4();
        // AdCP 3.1 requires operation_id in the payload; a registration without one (AdCP 3.0 has no
        // such field) is correlated by the task id, never by anything derived from the URL.
        const envelope = mcpEnvelope(sc, { operationId: pnc.operation_id ?? change.taskId, context: change.context ?? undefined }, key);
        envelope.domain = change.protocol;
        const protocol = change.protocol.replace(/_/g, '-');
        if (PAYLOAD_PROTOCOLS.has(protocol)) envelope.protocol = protocol;
        await outbox.enqueue(tx, {
          url: pnc.url,
          auth: authOf(pnc.authentication),
          format: 'mcp',
          idempotencyKey: key,
          body: JSON.stringify(envelope),
          taskId: change.taskId,
          operationId: pnc.operation_id,
        });
      }
      const a2a = change.a2aPushConfig;
      if (a2a) {
        const key = ids.uuid4();
        await outbox.enqueue(tx, {
          url: a2a.url,
          auth: authOf(a2a.authentication),
          format: 'a2a',
          idempotencyKey: key,
          body: JSON.stringify(a2aBody(sc, key)),
          taskId: change.taskId,
          notificationToken: a2a.token,
        });
      }
    },
  };
}
