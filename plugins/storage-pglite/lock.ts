import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'adagent.lock';

/** Another live process holds the data directory. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function holder(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Take the data directory for this process: `adagent.lock` holds our PID, created exclusively.
 * A lock whose PID is no longer running is stale and taken over. PGlite is one process's
 * database: a second opener would silently see only its own writes and corrupt indexes, so it
 * fails here, at once, saying what to do. Returns the release function (idempotent; also run
 * when the process exits).
 */
export function lockDataDir(dir: string): () => void {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = holder(path);
      if (pid !== null && alive(pid)) {
        throw new DataDirLockedError(
          `The PGlite data directory ${dir} is in use by process ${pid}. PGlite allows one process per data directory: ` +
            'stop that server first (or use another DATA_DIR), or run every process against Postgres (DATABASE_URL). ' +
            `If no such process is yours, delete ${path}.`,
        );
      }
      // Stale (its process is gone, or the file is empty from a crash mid-write): remove and retry;
      // of two processes racing here, the exclusive create lets exactly one win.
      try {
        unlinkSync(path);
      } catch {}
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      process.off('exit', release);
      if (holder(path) === process.pid) {
        try {
          unlinkSync(path);
        } catch {}
      }
    };
    process.on('exit', release);
    return release;
  }
  throw new DataDirLockedError(`Could not lock the PGlite data directory ${dir}: ${path} keeps reappearing`);
}
