import type { Queryable } from './database.ts';
import { token } from '../token.ts';
import type { Json } from '../task.ts';

/** Task statuses (agent-protocol "States and transitions"). */
export type TaskStatus = 'submitted' | 'working' | 'input-required' | 'completed' | 'failed' | 'canceled' | 'rejected';
export const TASK_STATUSES: readonly TaskStatus[] = ['submitted', 'working', 'input-required', 'completed', 'failed', 'canceled', 'rejected'];
export const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'canceled', 'rejected']);

export interface TaskProgress {
  percentage?: number;
  current_step?: string;
  total_steps?: number;
  step_number?: number;
}

/** AdCP-style registration (`push_notification_config` in task arguments): delivers the MCP envelope. */
export interface PushNotificationConfig {
  url: string;
  operation_id?: string;
  token?: string;
  authentication?: { schemes: string[]; credentials: string };
}

/** A2A-native registration (`configuration.pushNotificationConfig`): delivers A2A Task / TaskStatusUpdateEvent. */
export interface A2aPushConfig {
  url: string;
  id?: string;
  token?: string;
  authentication?: { schemes: string[]; credentials?: string };
}

export interface TaskRecord {
  id: string;
  taskType: string;
  protocol: string;
  principalId: string;
  status: TaskStatus;
  message: string | null;
  progress: TaskProgress | null;
  /** Last body: partial while running, full response when completed, error body when failed. */
  result: Json | null;
  context: Json | null;
  /** A2A context id the task belongs to (A2A callers; otherwise the task id). */
  contextId: string;
  pushNotificationConfig: PushNotificationConfig | null;
  a2aPushConfig: A2aPushConfig | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  /** The caller-chosen id the task answers to (NewTask.handle), if any. */
  handle?: string | null;
}

export interface NewTask {
  /** Chosen by the caller when it must know the id before the record commits; default a new UUID v7. */
  id?: string;
  /** A caller-chosen public id (sandbox directives): answered as task_id, found by get_task_status for this principal. */
  handle?: string;
  taskType: string;
  protocol: string;
  principalId: string;
  status: 'submitted' | 'working';
  message?: string;
  progress?: TaskProgress;
  result?: Json;
  context?: Json;
  contextId?: string;
  pushNotificationConfig?: PushNotificationConfig;
  a2aPushConfig?: A2aPushConfig;
  /** Opaque continuation state handed to the definition's `resume`. */
  state: Json;
  /** Earliest time the worker resumes it (default: now). */
  runAt?: Date;
  /** Writes that must commit with the record (see Deferral.within). */
  within?: (tx: Queryable) => Promise<void>;
}

export interface TaskUpdate {
  status?: TaskStatus;
  message?: string | null;
  progress?: TaskProgress | null;
  result?: Json | null;
  state?: Json;
  runAt?: Date | null;
}

export interface StatusHistoryEntry {
  status: TaskStatus;
  message: string | null;
  result: Json | null;
  at: Date;
}

/**
 * Durable task records (plugins/tasks). Every status change (creation included) is written in
 * one transaction with a `task_status_history` row and, when bound, a TaskNotifier call, so a
 * webhook outbox row exists exactly when the change committed.
 * Reads are principal-scoped: another principal's task, an unknown id and a malformed id are all
 * "not found" (null, or an empty history). Records never carry registration credentials (only the
 * notifier sees them). Contract: test/contract/task-store.contract.ts.
 */
export interface TaskStorePort {
  create(task: NewTask): Promise<TaskRecord>;
  get(id: string, principalId: string): Promise<TaskRecord | null>;
  /**
   * Apply an update; a status change is recorded (history + notifier), repeating the current status
   * is not a change. A status change of a terminal task is refused (INVALID_STATE, 409); an unknown
   * id is REFERENCE_NOT_FOUND.
   */
  update(id: string, update: TaskUpdate): Promise<TaskRecord>;
  history(id: string, principalId: string): Promise<StatusHistoryEntry[]>;
  /** Cancel a non-terminal task of this principal; returns the record (unchanged when already terminal). */
  cancel(id: string, principalId: string): Promise<TaskRecord | null>;
  /**
   * Resume every deferred task that is due (runs the definitions' `resume`); returns how many ran.
   * The plugin's worker calls it on a timer; tests call it to advance deterministically.
   * Claims use `FOR UPDATE SKIP LOCKED` plus a lease, so instances never run one step twice at once.
   */
  runDue(limit?: number): Promise<number>;
}

export const TaskStore = token<TaskStorePort>('core.task-store');
