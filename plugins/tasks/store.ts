import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';
import type { TaskNotifierPort, TaskStatusChange } from '../../core/ports/task-notifier.ts';
import { TERMINAL_STATUSES, type NewTask, type StatusHistoryEntry, type TaskRecord, type TaskStatus, type TaskUpdate } from '../../core/ports/tasks.ts';
import type { Json } from '../../core/task.ts';

interface TaskRow {
  id: string;
  task_type: string;
  protocol: string;
  principal_id: string;
  status: TaskStatus;
  message: string | null;
  progress: any;
  result: any;
  context: any;
  context_id: string;
  push_notification_config: any;
  a2a_push_config: any;
  state: Json;
  run_at: string | Date | null;
  attempts: number;
  sequence: number;
  created_at: string | Date;
  updated_at: string | Date;
  completed_at: string | Date | null;
  handle?: string | null;
}

const COLUMNS = sql.raw(`id::text, task_type, protocol, principal_id, status, message, progress, result, context, context_id,
  push_notification_config, a2a_push_config, state, run_at, attempts, sequence, created_at, updated_at, completed_at, handle`);

export function toRecord(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    taskType: row.task_type,
    protocol: row.protocol,
    principalId: row.principal_id,
    status: row.status,
    message: row.message,
    progress: row.progress ?? null,
    result: row.result ?? null,
    context: row.context ?? null,
    contextId: row.context_id,
    // Reads never hand out the registration's credentials (only the notifier needs them).
    pushNotificationConfig: withoutCredentials(row.push_notification_config),
    a2aPushConfig: withoutCredentials(row.a2a_push_config),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    completedAt: row.completed_at ? new Date(row.completed_at) : null,
    handle: row.handle ?? null,
  };
}

type WithAuth = { authentication?: { schemes: string[]; credentials?: string } } | null | undefined;

function withoutCredentials<T extends WithAuth>(config: T): T | null {
  if (!config) return null;
  if (!config.authentication) return config;
  return { ...config, authentication: { schemes: config.authentication.schemes } };
}

/** Registration credentials are sealed at rest (SecretBox) and opened only for the notifier. */
async function mapCredentials<T extends WithAuth>(config: T, fn: (value: string) => Promise<string>): Promise<T | null> {
  if (!config) return null;
  const credentials = config.authentication?.credentials;
  if (credentials === undefined) return config;
  return { ...config, authentication: { ...config.authentication!, credentials: await fn(credentials) } };
}

export interface InternalTask extends TaskRecord {
  state: Json;
  attempts: number;
}

function historyInsert(row: Pick<TaskRow, 'id' | 'sequence' | 'status' | 'message' | 'result'>, previous: TaskStatus | null, at: Date) {
  return sql`
    INSERT INTO task_status_history (task_id, sequence, status, previous_status, message, result, at)
    VALUES (${row.id}::uuid, ${row.sequence}::int, ${row.status}::text, ${previous}::text, ${row.message}::text,
            ${row.result ?? null}::jsonb, ${at}::timestamptz)`;
}

/**
 * Task rows and their status history. Each status change is one transaction: row update,
 * history row, notifier call.
 */
export class TaskRepository {
  constructor(
    private readonly db: DatabasePort,
    private readonly clock: ClockPort,
    private readonly ids: IdsPort,
    private readonly notifier: TaskNotifierPort | undefined,
    private readonly box: SecretBoxPort,
  ) {}

  private insertHistory(tx: Queryable, row: Pick<TaskRow, 'id' | 'sequence' | 'status' | 'message' | 'result'>, previous: TaskStatus | null, at: Date) {
    return tx.query(historyInsert(row, previous, at));
  }

  private async recordChange(tx: Queryable, row: TaskRow, previous: TaskStatus | null, at: Date, notify = true): Promise<void> {
    await this.insertHistory(tx, row, previous, at);
    if (notify) await this.notify(tx, row, previous, at);
  }

  private async notify(tx: Queryable, row: TaskRow, previous: TaskStatus | null, at: Date): Promise<void> {
    const notifier = this.notifier;
    if (!notifier) return;
    const open = (value: string) => this.box.open(value);
    const pushConfig = await mapCredentials(row.push_notification_config, open);
    const change: TaskStatusChange = {
      taskId: row.id,
      taskType: row.task_type,
      protocol: row.protocol,
      principalId: row.principal_id,
      status: row.status,
      previousStatus: previous,
      initial: previous === null,
      sequence: row.sequence,
      timestamp: at.toISOString(),
      message: row.message,
      // Events: `working` carries progress, the other statuses the task body.
      result: row.status === 'working' && row.progress ? row.progress : (row.result ?? null),
      context: row.context ?? null,
      contextId: row.context_id,
      pushNotificationConfig: pushConfig,
      operationId: pushConfig?.operation_id ?? null,
      a2aPushConfig: await mapCredentials(row.a2a_push_config, open),
    };
    await notifier.statusChanged(tx, change);
  }

  /** Create the record (and its first history row) in its own transaction, with `task.within`. */
  async create(task: NewTask): Promise<TaskRecord> {
    return this.db.transaction((tx) => this.createIn(tx, task));
  }

  /**
   * Create the record inside the caller's transaction. Its statements (and `task.within`'s first
   * ones) are issued together, so the database gets them in one round trip; a failure of any of
   * them fails the call and the caller's transaction rolls back.
   */
  async createIn(tx: Queryable, task: NewTask): Promise<TaskRecord> {
    const id = task.id ?? this.ids.uuid7();
    const now = this.clock.now();
    const seal = (value: string) => this.box.seal(value);
    const [pushConfig, a2aConfig] = await Promise.all([mapCredentials(task.pushNotificationConfig, seal), mapCredentials(task.a2aPushConfig, seal)]);
    const message = task.message ?? null;
    const result = task.result ?? null;
    const row: TaskRow = {
      id,
      task_type: task.taskType,
      protocol: task.protocol,
      principal_id: task.principalId,
      status: task.status,
      message,
      progress: task.progress ?? null,
      result,
      context: task.context ?? null,
      context_id: task.contextId ?? id,
      push_notification_config: pushConfig,
      a2a_push_config: a2aConfig,
      state: task.state,
      run_at: task.runAt ?? now,
      attempts: 0,
      sequence: 1,
      created_at: now,
      updated_at: now,
      completed_at: null,
      handle: task.handle ?? null,
    };
    // A handle names the newest task: an older one of this principal gives it up.
    if (task.handle) await tx.query(sql`UPDATE tasks SET handle = NULL WHERE principal_id = ${row.principal_id}::text AND handle = ${task.handle}::text`);
    // The record and its first history row (made from it) in one statement; nothing is read back
    // (the row is known) and `within`'s writes travel with it.
    await Promise.all([
      task.within?.(tx),
      tx.query(sql`
        WITH created AS (
          INSERT INTO tasks (id, task_type, protocol, principal_id, status, message, progress, result, context, context_id,
                             push_notification_config, a2a_push_config, state, run_at, sequence, created_at, updated_at, handle)
          VALUES (${id}::uuid, ${row.task_type}::text, ${row.protocol}::text, ${row.principal_id}::text, ${row.status}::text,
                  ${message}::text, ${row.progress}::jsonb, ${result}::jsonb, ${row.context}::jsonb, ${row.context_id}::text,
                  ${pushConfig}::jsonb, ${a2aConfig}::jsonb, ${row.state}::jsonb, ${row.run_at}::timestamptz, 1,
                  ${now}::timestamptz, ${now}::timestamptz, ${row.handle ?? null}::text)
          RETURNING id, sequence, status, message, result, created_at)
        INSERT INTO task_status_history (task_id, sequence, status, previous_status, message, result, at)
        SELECT id, sequence, status, NULL, message, result, created_at FROM created`),
    ]);
    await this.notify(tx, row, null, now);
    return toRecord(row);
  }

  async get(id: string, principalId: string | null): Promise<InternalTask | null> {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
    // Any other string can only be a handle, which belongs to one principal.
    if (!uuid && principalId === null) return null;
    const rows = await this.db.query<TaskRow>(sql`
      SELECT ${COLUMNS} FROM tasks
      WHERE ${uuid ? sql`id = ${id}::uuid` : sql`handle = ${id}::text`} ${principalId === null ? sql.empty : sql`AND principal_id = ${principalId}::text`}`);
    const row = rows[0];
    return row ? { ...toRecord(row), state: row.state, attempts: row.attempts } : null;
  }

  /** Apply `update` under a row lock; with `onlyIf`, do nothing unless the current row passes it. */
  async update(
    id: string,
    update: TaskUpdate & { releaseLease?: boolean },
    onlyIf?: (current: TaskRecord) => boolean,
    options: { notify?: boolean } = {},
  ): Promise<TaskRecord> {
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const [current] = await tx.query<TaskRow>(sql`SELECT ${COLUMNS} FROM tasks WHERE id = ${id}::uuid FOR UPDATE`);
      if (!current) throw new ProtocolError('REFERENCE_NOT_FOUND', `Task ${id} not found`, { status: 404, field: 'task_id' });
      if (onlyIf && !onlyIf(toRecord(current))) return toRecord(current);
      if (update.status !== undefined && TERMINAL_STATUSES.has(current.status)) {
        throw new ProtocolError('INVALID_STATE', `Task ${id} is already ${current.status}`, { status: 409 });
      }
      const status = update.status ?? current.status;
      const terminal = TERMINAL_STATUSES.has(status);
      // An event is a new status, or new progress while working; repeating the status is not one.
      const progressed = update.progress != null && JSON.stringify(update.progress) !== JSON.stringify(current.progress ?? null);
      const statusEvent = update.status !== undefined && (status !== current.status || progressed);
      const [row] = await tx.query<TaskRow>(sql`
        UPDATE tasks SET
          status = ${status}::text,
          message = ${update.message !== undefined ? update.message : current.message}::text,
          progress = ${update.progress !== undefined ? update.progress : current.progress}::jsonb,
          result = ${update.result !== undefined ? update.result : current.result}::jsonb,
          state = ${update.state ?? current.state}::jsonb,
          run_at = ${terminal ? null : update.runAt !== undefined ? update.runAt : current.run_at}::timestamptz,
          lease_until = ${update.releaseLease || terminal ? sql`NULL` : sql`lease_until`},
          sequence = sequence + ${statusEvent ? 1 : 0}::int,
          updated_at = ${now}::timestamptz,
          completed_at = ${terminal ? now : null}::timestamptz
        WHERE id = ${id}::uuid
        RETURNING ${COLUMNS}`);
      if (statusEvent) await this.recordChange(tx, row!, current.status, now, options.notify !== false);
      return toRecord(row!);
    });
  }

  /**
   * A principal's tasks, newest first, `limit` at a time: `after` is the id of the last task of the previous page
   * (ids are UUID v7, so id order is creation order and the page boundary is stable while tasks are added).
   */
  async list(principalId: string, options: { after?: string; limit: number }): Promise<TaskRecord[]> {
    const rows = await this.db.query<TaskRow>(sql`
      SELECT ${COLUMNS} FROM tasks
      WHERE principal_id = ${principalId}::text ${options.after ? sql`AND id < ${options.after}::uuid` : sql.empty}
      ORDER BY id DESC LIMIT ${options.limit}::int`);
    return rows.map(toRecord);
  }

  async history(id: string): Promise<StatusHistoryEntry[]> {
    const rows = await this.db.query<{ status: TaskStatus; message: string | null; result: Json | null; at: string | Date }>(sql`
      SELECT status, message, result, at FROM task_status_history WHERE task_id = ${id}::uuid ORDER BY sequence`);
    return rows.map((r) => ({ status: r.status, message: r.message, result: r.result ?? null, at: new Date(r.at) }));
  }

  /**
   * Claim due steps: rows whose `run_at` passed and whose lease is free. SKIP LOCKED keeps
   * instances off each other's rows; the lease keeps a step from running twice while it runs.
   */
  async claimDue(limit: number, leaseSeconds: number): Promise<InternalTask[]> {
    const now = this.clock.now();
    const leaseUntil = new Date(now.getTime() + leaseSeconds * 1000);
    return this.db.transaction(async (tx) => {
      const rows = await tx.query<TaskRow>(sql`
        UPDATE tasks SET lease_until = ${leaseUntil}::timestamptz, attempts = attempts + 1
        WHERE id IN (
          SELECT id FROM tasks
          WHERE run_at IS NOT NULL AND run_at <= ${now}::timestamptz
            AND status IN ('submitted', 'working')
            AND (lease_until IS NULL OR lease_until < ${now}::timestamptz)
          ORDER BY run_at
          LIMIT ${limit}::int
          FOR UPDATE SKIP LOCKED)
        RETURNING ${COLUMNS}`);
      return rows.map((row) => ({ ...toRecord(row), state: row.state, attempts: row.attempts }));
    });
  }
}
