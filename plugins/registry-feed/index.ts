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
import { recentEndpoint } from './recent.ts';

export { sequenceEvents } from './event-log.ts';
export { readFeed, pruneEvents, RETENTION_DAYS } from './read.ts';

const options = v.object({
  /** How often committed events are sequenced in the background (readers also do it); 0 = only on read. */
  sequenceIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 1000),
  /** How often the retention job deletes events older than 90 days; 0 = never. */
  retentionIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 3_600_000),
  retentionBatch: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 5000),
});

/**
 * The change feed: the EventLog port (staged in the writer's transaction, sequenced into
 * gap-free monotonic UUID v7 ids), `GET /api/registry/feed`, and the 90-day retention job.
 */
export default definePlugin({
  name: 'registry-feed',
  provides: [EventLog],
  deps: { db: Database, clock: Clock, ids: Ids, endpoints: Endpoints },
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, ids, endpoints }, kernel) {
    const o = kernel.options;
    kernel.provide(EventLog, createEventLog(clock));
    endpoints.add(feedEndpoint({ db, clock, ids }), recentEndpoint({ db, ids }));
    if (o.sequenceIntervalMs > 0) {
      kernel.scheduler.add({ name: 'sequence', intervalMs: o.sequenceIntervalMs, run: async () => void (await sequenceEvents(db, ids)) });
    }
    if (o.retentionIntervalMs > 0) {
      kernel.scheduler.add({
        name: 'retention',
        intervalMs: o.retentionIntervalMs,
        async run() {
          const deleted = await pruneEvents(db, clock.now(), { batch: o.retentionBatch });
          if (deleted) kernel.logger.info({ deleted }, 'feed retention: old events deleted');
        },
      });
    }
  },
});
