import type { JobSpec } from '../core/scheduler.ts';

/** One stage of the idle collection: after a burst, once no request has arrived for `idleMs`, run `collect` once. */
export interface IdleStage {
  name: string;
  idleMs: number;
  collect: () => void;
}

/**
 * Collections after each burst of requests, once none has arrived for a while.
 *
 * The engine collects lazily: after a burst, tens of megabytes of garbage stay resident until
 * allocation resumes, so an idle process keeps its peak footprint. Collected while nothing is
 * served, that memory goes back to the system (the allocator returns freed pages seconds later)
 * without a pause any request would see. `touch` is called for every request; each stage's job runs
 * every `idleMs` and collects when its last interval saw no request but some arrived since its last collection.
 */
export function idleCollector(stages: IdleStage[]): { touch(): void; jobs: JobSpec[] } {
  let requests = 0;
  const jobs = stages.map(({ name, idleMs, collect }): JobSpec => {
    let seen = 0;
    let collectedAt = 0;
    return {
      name,
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
    };
  });
  return {
    touch() {
      requests++;
    },
    jobs,
  };
}

/** The garbage of a burst. */
export const collectGarbage = (): void => Bun.gc(true);

/**
 * A longer idle's collection: besides the garbage, the engine drops the code it compiled and the
 * allocator returns what is free (~10 MB of the agents' server). The next burst compiles its hot
 * functions again (measured there: 0.3-0.5 s more CPU over its first 600 calls). `Bun.shrink` is
 * marked deprecated in Bun's types; where it is gone, this is the plain collection.
 */
export function shrink(): void {
  Bun.gc(true);
  (Bun as { shrink?: () => void }).shrink?.();
}
