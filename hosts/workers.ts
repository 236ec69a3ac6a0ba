import { availableParallelism } from 'node:os';
import type { Subprocess } from 'bun';
import type { Deployment } from '../core/deployment.ts';
import { Database } from '../core/ports/database.ts';
import type { Logger } from '../core/log.ts';

/**
 * Several processes serving one port: every process listens with SO_REUSEPORT and the kernel
 * spreads connections across them. Workers share nothing but the database, which already holds
 * everything instances share (idempotency, nonces, rate limits, outbox, jobs, caches' NOTIFY),
 * so N workers behave exactly as N instances behind a load balancer. The primary serves too and
 * supervises the others. PGlite is one process's database, so a PGlite deployment serves from one.
 */

/** Set in a worker's environment to the primary's pid; the worker then serves and never spawns. */
const WORKER_OF = 'WORKER_OF';
/** A worker that dies within this long of starting is restarted with a growing delay. */
const STABLE_MS = 10_000;
const MAX_RESTART_DELAY_MS = 30_000;

export function isWorker(env: Record<string, string | undefined> = process.env): boolean {
  return !!env[WORKER_OF];
}

/** How many processes should serve this deployment (`server.workers`, 0 = one per core). */
export function workerCount(deployment: Deployment): { count: number; reason?: string } {
  const wanted = deployment.config.server.workers || availableParallelism();
  if (wanted > 1 && deployment.tryGet(Database)?.kind === 'pglite') {
    return { count: 1, reason: 'PGlite is an embedded single-process database: serving from one process (set DATABASE_URL for Postgres to use more)' };
  }
  return { count: wanted };
}

export interface Workers {
  /** SIGTERM every worker and wait until they have drained and exited. */
  stop(): Promise<void>;
}

/**
 * Start `count - 1` workers running this same command with the port the primary bound (so
 * `PORT=0` works). A worker that exits while the primary runs is restarted; one that keeps
 * crashing right after start waits longer each time (up to 30 s).
 */
export function startWorkers(count: number, port: number, logger: Logger): Workers {
  const log = logger.child({ component: 'workers' });
  const children = new Set<Subprocess>();
  let stopping = false;

  const spawn = (index: number, delayMs: number) => {
    const startedAt = Date.now();
    const child = Bun.spawn([process.execPath, ...process.argv.slice(1)], {
      env: { ...process.env, PORT: String(port), [WORKER_OF]: String(process.pid), WORKER_INDEX: String(index) },
      // The pipe closes when the primary dies, however it dies: workers watch it (see followPrimary).
      stdin: 'pipe',
      stdout: 'inherit',
      stderr: 'inherit',
    });
    children.add(child);
    void child.exited.then((code) => {
      children.delete(child);
      if (stopping) return;
      const next = Date.now() - startedAt < STABLE_MS ? Math.min(MAX_RESTART_DELAY_MS, Math.max(1000, delayMs * 2)) : 1000;
      log.error({ worker: index, code, restartInMs: next }, 'worker exited; restarting it');
      setTimeout(() => {
        if (!stopping) spawn(index, next);
      }, next);
    });
  };
  for (let i = 1; i < count; i++) spawn(i, 0);
  log.info({ workers: count, port }, 'serving from several processes (SO_REUSEPORT)');

  return {
    async stop() {
      stopping = true;
      const exits = [...children].map((child) => {
        child.kill('SIGTERM');
        return child.exited;
      });
      await Promise.all(exits);
    },
  };
}

/** In a worker: run `onGone` when the primary is gone (its end of our stdin closed). */
export function followPrimary(onGone: () => void): void {
  void (async () => {
    for await (const _ of Bun.stdin.stream());
    onGone();
  })();
}
