import type { JobSpec } from '../core/scheduler.ts';

/**
 * One full garbage collection after each burst of requests, once none has arrived for a while.
 *
 * The engine collects lazily: after a burst, tens of megabytes of garbage stay resident until
 * allocation resumes, so an idle process keeps its peak footprint. Collected while nothing is
 * served, that memory goes back to the system (the allocator returns freed pages seconds later)
 * without a pause any request would see. `touch` is called for every request; the job runs every
 * `idleMs` and collects when the last interval saw no request but some arrived since the last collection.
 */
export function idleCollector(idleMs: number, collect: () => void = () => Bun.gc(true)): { touch(): void; job: JobSpec } {
  let requests = 0;
  let seen = 0;
  let collectedAt = 0;
  return {
    touch() {
      requests++;
    },
    job: {
      name: 'host.idle-collect',
      intervalMs: idleMs,
      runAtStart: false,
      run() {
        if (requests !== seen) {
          seen = requests;
          return;
        }
        if (collectedAt === requests) return;
        collectedAt = requests;
        collect();
      },
    },
  };
}
