import type { IdsPort } from '../../core/ports/ids.ts';
import type { TaskNotifierPort, TaskStatusChange } from '../../core/ports/task-notifier.ts';
import type { WebhookAuth, WebhookOutboxPort } from '../../core/ports/webhook-outbox.ts';
import { ProtocolError } from '../../core/errors.ts';
import { a2aBody, mcpEnvelope, type StatusChange } from './envelopes.ts';

/** The mode is chosen only by `authentication` at registration: absent = RFC 9421. */
export function authOf(authentication: { schemes: string[]; credentials?: string } | undefined): WebhookAuth {
  if (!authentication) return { mode: 'rfc9421' };
  const schemes = authentication.schemes.map((s) => s.toUpperCase());
  const credentials = authentication.credentials ?? '';
  if (schemes.length === 1 && schemes[0] === 'HMAC-SHA256') return { mode: 'hmac', secret: credentials };
  if (schemes.length === 1 && schemes[0] === 'BEARER') return { mode: 'bearer', token: credentials };
  throw new ProtocolError('INVALID_REQUEST', 'authentication.schemes must be ["HMAC-SHA256"] or ["Bearer"] (or omit authentication for signed webhooks)', {
    field: 'push_notification_config.authentication.schemes',
  });
}

/**
 * The task lifecycle's notifier: one webhook per status change after the initial response (a
 * terminal initial response creates no task, so it never gets here), written to the outbox in
 * the status change's transaction. Both registrations fire when both exist.
 */
export function createTaskNotifier(outbox: WebhookOutboxPort, ids: IdsPort): TaskNotifierPort {
  return {
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
        const envelope = mcpEnvelope(sc, { operationId: pnc.operation_id ?? '', context: change.context ?? undefined }, key);
        envelope.domain = change.protocol;
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
