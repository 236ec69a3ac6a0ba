import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { EventLog } from '../../core/ports/events.ts';
import { FeedFollower, runFollower } from './follower.ts';

export { FeedFollower, runFollower } from './follower.ts';

const options = v.object({
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
  listings: v.optional(v.array(v.pipe(v.string(), v.regex(/^\//, 'must be a path'))), ['/api/registry/publishers', '/api/registry/agents', '/api/registry/stats']),
});

const followers = new WeakMap<object, { stop(): Promise<void> }>();

/**
 * A self-hosted mirror: follows another registry's feed into this database (same event ids, so
 * this instance's own /api/registry/feed serves an identical copy). A mirror must not also write
 * events of its own (no crawl pipeline), or its local ids would interleave with upstream ones.
 */
export default definePlugin({
  name: 'registry-mirror',
  // registry_events belongs to registry-feed: require it so its migration runs first.
  requires: [Database, EventLog],
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  start(ctx) {
    if (!ctx.options.follow) return;
    const follower = new FeedFollower(ctx.get(Database), ctx.options, ctx.logger);
    ctx.logger.info({ from: follower.source }, 'mirror following upstream feed');
    followers.set(ctx, runFollower(follower, ctx.options.intervalMs, ctx.logger, (step) => {
      if (step.received) ctx.logger.info({ received: step.received, applied: step.applied }, 'mirror page applied');
    }));
  },
  async stop(ctx) {
    await followers.get(ctx)?.stop();
    followers.delete(ctx);
  },
});
