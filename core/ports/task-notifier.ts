import { token } from '../token.ts';
import type { Queryable } from './database.ts';
import type { Json } from '../task.ts';
import type { A2aPushConfig, PushNotificationConfig, TaskStatus } from './tasks.ts';

/**
 * One task status change, with everything a webhook needs: the MCP envelope (`task_id`,
 * `task_type`, `status`, `timestamp`, `message`, `result`, `context`, `operation_id`) and an
 * A2A TaskStatusUpdateEvent (`taskId`, `contextId`, `status.state`, `status.timestamp`,
 * message / artifact parts built from `result`).
 */
export interface TaskStatusChange {
  taskId: string;
  taskType: string;
  /** Protocol group (`signals`, `media_buy`...); the MCP envelope's `domain`. */
  protocol: string;
  principalId: string;
  status: TaskStatus;
  previousStatus: TaskStatus | null;
  /** True for the task's creation (an initial `submitted`/`working` response). */
  initial: boolean;
  /** 1, 2, 3... per task: lets receivers and outboxes order events. */
  sequence: number;
  /** ISO 8601, from the Clock port. */
  timestamp: string;
  message: string | null;
  /** Per status (agent-protocol "Events"): progress for working, full response for completed/failed. */
  result: Json | null;
  /** The request's `context`, to be echoed verbatim. */
  context: Json | null;
  /** A2A context id (equals the task id for non-A2A callers). */
  contextId: string;
  /** AdCP-style registration: delivers the MCP envelope (for MCP, A2A and REST callers alike). */
  pushNotificationConfig: PushNotificationConfig | null;
  /** Echo of `pushNotificationConfig.operation_id`, for convenience. */
  operationId: string | null;
  /** A2A-native registration: delivers an A2A TaskStatusUpdateEvent. */
  a2aPushConfig: A2aPushConfig | null;
}

/**
 * Implemented by the webhooks plugin. Called inside the transaction that records each task
 * status change (never for a terminal initial response, which creates no task). Write outbox
 * rows with `tx`; do no network I/O here. Throwing rolls the status change back.
 * With no notifier bound, status changes are still recorded in `task_status_history`.
 */
export interface TaskNotifierPort {
  statusChanged(tx: Queryable, change: TaskStatusChange): Promise<void>;
  /**
   * Refuse now (ProtocolError INVALID_REQUEST naming the field) any registration that delivery
   * would refuse later: unsupported schemes, weak HMAC secrets, Bearer on mutating callbacks.
   */
  checkRegistration(registration: { push?: PushNotificationConfig; a2a?: A2aPushConfig; mutating: boolean }): void;
}

export const TaskNotifier = token<TaskNotifierPort>('core.task-notifier');
