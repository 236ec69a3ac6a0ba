import { definePlugin } from '../../core/plugin.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Auth } from '../../core/ports/auth.ts';
import { EventLog } from '../../core/ports/events.ts';
import { Ownership } from '../../core/ports/ownership.ts';
import { BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import { BrandDirectory } from '../../core/ports/directory.ts';
import { sql } from '../../core/sql.ts';
import { recordBrandJson } from './authoritative.ts';
import { backfillSkeletons, revisionTablesDdl, skeletonDdl, skeletonResetDdl } from '../registry-revisions/store.ts';
import { BRAND_TABLES } from './tables.ts';
import { EntryCache } from '../registry-revisions/cache.ts';
import { brandEndpoints } from './endpoints.ts';

/** Brand resolution and community brand saves with revision history. */
// Per deployment (several can share a process, e.g. in tests).
const caches = new WeakMap<object, { cache: EntryCache<any>; unfollow?: () => Promise<void> }>();

export default definePlugin({
  name: 'registry-brands',
  provides: [BrandJsonRecords, BrandDirectory],
  requires: [Database, Auth],
  optional: [EventLog, Ownership],
  migrations: [
    {
      version: 1,
      name: 'brands',
      sql: `${revisionTablesDdl('brands', 'brand_revisions')}
CREATE INDEX brands_name ON brands (lower(data->>'brand_name'));
CREATE INDEX brands_source ON brands (source);`,
    },
    { version: 2, name: 'brands_skeleton', sql: skeletonDdl('brands') },
    // The confusable fact table grew (sequences such as rn/m): recompute every skeleton at start.
    { version: 3, name: 'brands_skeleton_facts_2', sql: skeletonResetDdl('brands') },
  ],
  register(ctx) {
    const cache = new EntryCache('brands');
    caches.set(ctx, { cache });
    const ids = ctx.get(Ids);
    const clock = ctx.get(Clock);
    const db = ctx.get(Database);
    ctx.provide(BrandDirectory, {
      // strpos: the term is a literal substring (no LIKE wildcards to escape).
      search: (term, limit) =>
        db.query(sql`
          SELECT domain, data->>'brand_name' AS name, source FROM brands
          WHERE strpos(domain, ${term}::text) > 0 OR strpos(lower(data->>'brand_name'), ${term}::text) > 0
          ORDER BY domain LIMIT ${limit}::int`),
    });
    ctx.provide(BrandJsonRecords, {
      async record(tx, domain, document) {
        await recordBrandJson(tx, domain, document, { newId: ids.uuid7, now: clock.now() });
      },
    });
    ctx.get(Endpoints).add(
      ...brandEndpoints({
        db: ctx.get(Database),
        clock: ctx.get(Clock),
        ids: ctx.get(Ids),
        events: () => ctx.tryGet(EventLog),
        ownership: () => ctx.tryGet(Ownership),
      }, cache),
    );
  },
  async start(ctx) {
    await backfillSkeletons(ctx.get(Database), BRAND_TABLES);
    const state = caches.get(ctx)!;
    state.unfollow = await state.cache.follow(ctx.get(Database), ctx.logger);
  },
  async stop(ctx) {
    await caches.get(ctx)?.unfollow?.();
  },
});
