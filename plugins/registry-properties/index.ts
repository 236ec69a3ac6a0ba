import { definePlugin } from '../../core/plugin.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Auth } from '../../core/ports/auth.ts';
import { EventLog } from '../../core/ports/events.ts';
import { Ownership } from '../../core/ports/ownership.ts';
import { AdagentsRecords } from '../../core/ports/authoritative-records.ts';
import { PropertyDirectory } from '../../core/ports/directory.ts';
import { sql } from '../../core/sql.ts';
import { recordAdagentsJson } from './authoritative.ts';
import { backfillSkeletons, revisionTablesDdl, skeletonDdl, skeletonResetDdl } from '../registry-revisions/store.ts';
import { PROPERTY_TABLES } from './tables.ts';
import { EntryCache } from '../registry-revisions/cache.ts';
import { propertyEndpoints } from './endpoints.ts';

/** Property resolution per publisher domain and hosted property saves with revision history. */
// Per deployment (several can share a process, e.g. in tests).
const caches = new WeakMap<object, { cache: EntryCache<any>; unfollow?: () => Promise<void> }>();

export default definePlugin({
  name: 'registry-properties',
  provides: [AdagentsRecords, PropertyDirectory],
  requires: [Database, Auth],
  optional: [EventLog, Ownership],
  migrations: [
    { version: 1, name: 'property_entries', sql: `${revisionTablesDdl('property_entries', 'property_revisions')}\nCREATE INDEX property_entries_source ON property_entries (source);` },
    { version: 2, name: 'property_entries_skeleton', sql: skeletonDdl('property_entries') },
    // The confusable fact table grew (sequences such as rn/m): recompute every skeleton at start.
    { version: 3, name: 'property_entries_skeleton_facts_2', sql: skeletonResetDdl('property_entries') },
  ],
  register(ctx) {
    const cache = new EntryCache('property_entries');
    caches.set(ctx, { cache });
    const ids = ctx.get(Ids);
    const clock = ctx.get(Clock);
    const db = ctx.get(Database);
    ctx.provide(PropertyDirectory, {
      search: (term, limit) =>
        db.query(sql`
          SELECT e.domain AS publisher_domain, p->>'id' AS id, p->>'name' AS name, p->>'type' AS type, p->'identifiers' AS identifiers, e.source
          FROM property_entries e, jsonb_array_elements(e.data->'properties') p
          WHERE strpos(lower(p->>'name'), ${term}::text) > 0
             OR EXISTS (SELECT 1 FROM jsonb_array_elements(p->'identifiers') i WHERE strpos(lower(i->>'value'), ${term}::text) > 0)
          ORDER BY p->>'name', e.domain LIMIT ${limit}::int`),
    });
    ctx.provide(AdagentsRecords, {
      // Crawled properties get their feed events from the discovery projection; none are emitted here.
      async record(tx, domain, document) {
        await recordAdagentsJson(tx, domain, document as Parameters<typeof recordAdagentsJson>[2], { newId: ids.uuid7, now: clock.now(), actor: 'crawler' });
      },
    });
    ctx.get(Endpoints).add(
      ...propertyEndpoints(
        { db: ctx.get(Database), clock: ctx.get(Clock), ids: ctx.get(Ids), events: () => ctx.tryGet(EventLog), ownership: () => ctx.tryGet(Ownership) },
        cache,
      ),
    );
  },
  async start(ctx) {
    await backfillSkeletons(ctx.get(Database), PROPERTY_TABLES);
    const state = caches.get(ctx)!;
    state.unfollow = await state.cache.follow(ctx.get(Database), ctx.logger);
  },
  async stop(ctx) {
    await caches.get(ctx)?.unfollow?.();
  },
});
