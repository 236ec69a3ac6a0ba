import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { sql } from '../../core/sql.ts';
import { Database, type DatabasePort } from '../../core/ports/database.ts';
import { Clock, type ClockPort } from '../../core/ports/clock.ts';
import { RateLimiter, type RateLimiterPort } from '../../core/ports/rate-limit.ts';

/**
 * Fixed windows in the database. One statement per hit: insert the window's row or add one to
 * it, but only while it is under the limit, so a refused hit is not counted and concurrent hits
 * on several instances can never exceed the limit (the row lock serializes them).
 */
export function createDbRateLimiter(db: DatabasePort, clock: ClockPort): RateLimiterPort {
  return {
    async consume(key, limit, windowSeconds) {
      const nowMs = clock.now().getTime();
      const size = windowSeconds * 1000;
      const start = new Date(Math.floor(nowMs / size) * size);
      const end = new Date(start.getTime() + size);
      const retryAfter = Math.max(1, Math.ceil((end.getTime() - nowMs) / 1000));
      if (limit < 1) return { allowed: false, retryAfter, remaining: 0 };
      const rows = await db.query<{ count: number }>(sql`
        INSERT INTO rate_limit_windows (key, window_start, window_end, count)
        VALUES (${key}::text, ${start}::timestamptz, ${end}::timestamptz, 1)
        ON CONFLICT (key, window_start, window_end) DO UPDATE SET count = rate_limit_windows.count + 1
          WHERE rate_limit_windows.count < ${limit}::int
        RETURNING count`);
      const count = rows[0]?.count;
      if (count === undefined) return { allowed: false, retryAfter, remaining: 0 };
      return { allowed: true, retryAfter: 0, remaining: Math.max(0, limit - count) };
    },
  };
}

/** Delete windows that ended before `now`. */
export async function pruneWindows(db: DatabasePort, now: Date): Promise<number> {
  const rows = await db.query(sql`DELETE FROM rate_limit_windows WHERE window_end < ${now}::timestamptz RETURNING 1 AS x`);
  return rows.length;
}

/** The RateLimiter port over database fixed windows (shared by every instance on one database). */
export default definePlugin({
  name: 'rate-limit',
  provides: [RateLimiter],
  deps: { db: Database, clock: Clock },
  options: v.object({
    /** How often expired windows are deleted; 0 = never. */
    pruneIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 600_000),
  }),
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock }, kernel) {
    kernel.provide(RateLimiter, createDbRateLimiter(db, clock));
    if (kernel.options.pruneIntervalMs) {
      kernel.scheduler.add({
        name: 'prune',
        intervalMs: kernel.options.pruneIntervalMs,
        runAtStart: false,
        run: async () => void (await pruneWindows(db, clock.now())),
      });
    }
  },
});
