import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { EventLog } from '../../core/ports/events.ts';
import { FeedFollower } from './follower.ts';

export { FeedFollower } from './follower.ts';

export const mirrorOptions = v.object({
  /** Base URL of the registry to follow. */
  from: v.pipe(v.string(), v.url('must be a URL')),
  /** API key for the upstream feed. */
  key: v.pipe(v.string(), v.minLength(1)),
  pageSize: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000)), 1000),
  /** Poll interval once caught up. */
  intervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10)), 5000),
  timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100)), 30_000),
  /** Follow in the background once started (false: the caller drives FeedFollower itself). */
  follow: v.optional(v.boolean(), true),
  /** Listings snapshotted on re-bootstrap (410). */
  listings: v.optional(v.array(v.pipe(v.string(), v.regex(/^\//, 'must be a path'))), [
    '/api/registry/publishers',
    '/api/registry/agents',
    '/api/registry/collections',
    '/api/registry/stats',
  ]),
});

/**
 * A self-hosted mirror: follows another registry's feed into this database (same event ids, so
 * this instance's own /api/registry/feed serves an identical copy). A mirror must not also write
 * events of its own (no crawl pipeline), or its local ids would interleave with upstream ones.
 */
export default definePlugin({
  name: 'registry-mirror',
  // Events go to the feed through the EventLog port (registry-feed owns registry_events).
  deps: { db: Database, events: EventLog },
  env: { MIRROR_FROM: 'from', MIRROR_KEY: 'key' },
  options: mirrorOptions,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, events }, kernel) {
    const o = kernel.options;
    if (!o.follow) return;
    const follower = new FeedFollower(db, events, o, kernel.logger);
    kernel.logger.info({ from: follower.source }, 'mirror following upstream feed');
    kernel.scheduler.add({
      name: 'follow',
      intervalMs: o.intervalMs,
      // Transient upstream failures back off (interval x 2^failures, at most a minute).
      backoffMaxMs: 60_000,
      async run() {
        const step = await follower.step();
        if (step.received) kernel.logger.info({ received: step.received, applied: step.applied }, 'mirror page applied');
        return step.hasMore ? 'again' : undefined;
      },
    });
  },
});
