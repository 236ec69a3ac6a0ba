import { TERMINAL_STATUSES, type TaskRecord } from '../../core/ports/tasks.ts';
import type { TaskRepository } from './store.ts';

/** Cancel a principal's task unless it already ended; null when it is not theirs or unknown. */
export async function cancelTask(repo: TaskRepository, id: string, principalId: string): Promise<TaskRecord | null> {
  const task = await repo.get(id, principalId);
  if (!task) return null;
  return repo.update(id, { status: 'canceled', message: 'Canceled by the caller' }, (t) => !TERMINAL_STATUSES.has(t.status));
}
