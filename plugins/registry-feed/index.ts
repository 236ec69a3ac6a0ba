import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { EventLog } from '../../core/ports/events.ts';
import { createEventLog, sequenceEvents } from './event-log.ts';
import { pruneEvents } from './read.ts';
import { feedEndpoint } from './endpoint.ts';

export { sequenceEvents } from './event-log.ts';
export { readFeed, pruneEvents, RETENTION_DAYS } from './read.ts';

const options = v.object({
  /** How often committed events are sequenced in the background (readers also do it); 0 = only on read. */
  sequenceIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 1000),
  /** How often the retention job deletes events older than 90 days; 0 = never. */
  retentionIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 3_600_000),
  retentionBatch: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 5000),
});

const timers = new WeakMap<object, Array<() => void>>();

/** Background loop that never overlaps itself and logs (does not throw) failures. */
function every(ms: number, work: () => Promise<unknown>, onError: (e: unknown) => void): () => void {
  if (ms <= 0) return () => {};
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    work().catch(onError).finally(() => (running = false));
  }, ms);
  timer.unref?.();
  return () => clearInterval(timer);
}

/**
 * The change feed: the EventLog port (staged in the writer's transaction, sequenced into
 * gap-free monotonic UUID v7 ids), `GET /api/registry/feed`, and the 90-day retention job.
 */
export default definePlugin({
  name: 'registry-feed',
  provides: [EventLog],
  requires: [Database],
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  register(ctx) {
    const clock = ctx.get(Clock);
    ctx.provide(EventLog, createEventLog(clock));
    ctx.get(Endpoints).add(feedEndpoint({ db: ctx.get(Database), clock, ids: ctx.get(Ids) }));
  },
  start(ctx) {
    const db = ctx.get(Database);
    const ids = ctx.get(Ids);
    const clock = ctx.get(Clock);
    const stops = [
      every(ctx.options.sequenceIntervalMs, () => sequenceEvents(db, ids), (err) => ctx.logger.warn({ err }, 'event sequencing failed')),
      every(
        ctx.options.retentionIntervalMs,
        async () => {
          const deleted = await pruneEvents(db, clock.now(), { batch: ctx.options.retentionBatch });
          if (deleted) ctx.logger.info({ deleted }, 'feed retention: old events deleted');
        },
        (err) => ctx.logger.warn({ err }, 'feed retention failed'),
      ),
    ];
    timers.set(ctx, stops);
  },
  stop(ctx) {
    timers.get(ctx)?.forEach((stopTimer) => stopTimer());
    timers.delete(ctx);
  },
});
