/** Task statuses of the protocol (same strings as A2A task states). */
export const TASK_STATUSES = ['submitted', 'working', 'input-required', 'completed', 'failed', 'canceled', 'rejected'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'canceled', 'rejected']);

export interface StatusChange {
  taskId: string;
  taskType: string;
  status: TaskStatus;
  timestamp: Date;
  message?: string;
  result?: Record<string, unknown>;
  /** A2A context id (defaults to the task id). */
  contextId?: string;
}

/** The MCP envelope sent to `push_notification_config` registrations. */
export function mcpEnvelope(change: StatusChange, reg: { operationId: string; context?: unknown }, idempotencyKey: string) {
  const out: Record<string, unknown> = {
    idempotency_key: idempotencyKey,
    task_id: change.taskId,
    operation_id: reg.operationId, // echoed verbatim, never derived from the URL
    task_type: change.taskType,
    status: change.status,
    timestamp: change.timestamp.toISOString(),
  };
  if (change.message !== undefined) out.message = change.message;
  if (change.result !== undefined) out.result = change.result;
  if (reg.context !== undefined) out.context = reg.context;
  return out;
}

/**
 * The native A2A body for A2A push registrations: a `Task` for terminal states (result in the last
 * data part of artifacts[0]) and a `TaskStatusUpdateEvent` for interim ones (result in the first data
 * part of status.message). The idempotency key rides in metadata so receivers can dedup.
 */
export function a2aBody(change: StatusChange, idempotencyKey: string) {
  const contextId = change.contextId ?? change.taskId;
  const timestamp = change.timestamp.toISOString();
  const metadata = { idempotency_key: idempotencyKey };
  const textPart = change.message !== undefined ? [{ kind: 'text', text: change.message }] : [];
  if (TERMINAL.has(change.status)) {
    return {
      kind: 'task',
      id: change.taskId,
      contextId,
      status: { state: change.status, timestamp, ...(change.message !== undefined ? { message: a2aMessage(change, textPart) } : {}) },
      artifacts: change.result !== undefined ? [{ artifactId: `${change.taskId}-result`, parts: [{ kind: 'data', data: change.result }] }] : [],
      metadata,
    };
  }
  const parts = [...(change.result !== undefined ? [{ kind: 'data', data: change.result }] : []), ...textPart];
  return {
    kind: 'status-update',
    taskId: change.taskId,
    contextId,
    status: { state: change.status, timestamp, ...(parts.length ? { message: a2aMessage(change, parts) } : {}) },
    final: false,
    metadata,
  };
}

function a2aMessage(change: StatusChange, parts: unknown[]) {
  return { kind: 'message', role: 'agent', messageId: `${change.taskId}-${change.timestamp.getTime()}`, taskId: change.taskId, parts };
}

/** A push registration of one task call, as the task lifecycle stores it. */
export interface PushRegistration {
  channel: 'mcp' | 'a2a';
  url: string;
  operationId: string;
  /** Present = legacy mode selected at registration (`schemes` + `credentials`). */
  authentication?: { schemes: string[]; credentials: string };
  context?: unknown;
}
