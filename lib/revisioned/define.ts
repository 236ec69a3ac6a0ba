import * as v from 'valibot';
import type { Token } from '../../core/token.ts';
import { definePlugin, optional } from '../../core/plugin.ts';
import { Endpoints, type EndpointDefinition } from '../../core/endpoint.ts';
import { Database, type DatabasePort, type Migration, type Queryable } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { EventLog } from '../../core/ports/events.ts';
import { Ownership } from '../../core/ports/ownership.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import type { AuthoritativeRecordsPort } from '../../core/ports/authoritative-records.ts';
import type { DirectoryPort } from '../../core/ports/directory.ts';
import { EntryCache } from './cache.ts';
import { backfillSkeletons, type RevisionTables } from './store.ts';
import type { RevisionDeps } from './endpoints.ts';

/** What one revisioned registry (brands, hosted properties) is made of; the plugin around it is shared. */
export interface RevisionedRegistry<D, M> {
  name: string;
  tables: RevisionTables;
  /** The plugin's own tables: entries and revisions (see revisionTablesDdl) plus its indexes. */
  migrations: readonly Migration[];
  /** Where the crawl pipeline records the domain's authoritative file. */
  records: Token<AuthoritativeRecordsPort>;
  record(tx: Queryable, domain: string, document: Record<string, unknown>, ids: { newId: () => string; now: Date }): Promise<unknown>;
  /** Site-wide search over the entries (`GET /api/search`). */
  directory: Token<DirectoryPort<M>>;
  search(db: DatabasePort, term: string, limit: number): Promise<M[]>;
  /** Further ports the resource serves to other plugins (e.g. BrandLookup), read from its entries through the resolve cache. */
  ports?: ReadonlyArray<{ token: Token<any>; make(db: DatabasePort, cache: EntryCache<D>): unknown }>;
  /** Every endpoint of the resource (usually revisionEndpoints(...) plus listings). */
  endpoints(deps: RevisionDeps, cache: EntryCache<D>): EndpointDefinition[];
}

/**
 * A registry of domain entries with revision history, authoritative records from crawled files,
 * a NOTIFY-invalidated resolve cache and a site-search directory: one plugin per resource.
 */
export function defineRevisionedRegistry<D, M>(spec: RevisionedRegistry<D, M>) {
  return definePlugin({
    name: spec.name,
    options: v.object({
      /** Saves (and rollbacks) one organization may make per hour, brands and properties together. */
      orgSavesPerHour: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 30),
      /** ... and per day. */
      orgSavesPerDay: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 200),
      /** Brands: where a domain's homepage is fetched for enrichment (tests point it at loopback). */
      enrichOrigin: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\/\{domain\}(:\d+)?$/, 'must look like https://{domain}')), 'https://{domain}'),
      /** Brands: how long an enrichment is reused before the homepage is fetched again. */
      enrichTtlSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60)), 86_400),
    }),
    env: { ORG_SAVES_PER_HOUR: { path: 'orgSavesPerHour', type: 'int' }, ORG_SAVES_PER_DAY: { path: 'orgSavesPerDay', type: 'int' } },
    provides: [spec.records, spec.directory, ...(spec.ports ?? []).map((p) => p.token)],
    deps: {
      db: Database,
      clock: Clock,
      ids: Ids,
      endpoints: Endpoints,
      events: optional(EventLog),
      ownership: optional(Ownership),
      crawler: optional(Crawler),
    },
    migrations: spec.migrations,
    init({ db, clock, ids, endpoints, events, ownership, crawler }, kernel) {
      const cache = new EntryCache<D>(spec.tables.entries);
      kernel.provide(spec.directory, { search: (term, limit) => spec.search(db, term, limit) });
      kernel.provide(spec.records, {
        async record(tx, domain, document) {
          await spec.record(tx, domain, document, { newId: ids.uuid7, now: clock.now() });
        },
      });
      for (const port of spec.ports ?? []) kernel.provide(port.token, port.make(db, cache));
      const orgCaps = { perHour: kernel.options.orgSavesPerHour, perDay: kernel.options.orgSavesPerDay };
      const enrich = { crawler, origin: kernel.options.enrichOrigin, ttlSeconds: kernel.options.enrichTtlSeconds };
      endpoints.add(...spec.endpoints({ db, clock, ids, events, ownership, orgCaps, enrich }, cache));
      let unfollow: (() => Promise<void>) | undefined;
      return {
        async start() {
          await backfillSkeletons(db, spec.tables);
          unfollow = await cache.follow(db, kernel.logger);
        },
        stop: () => unfollow?.(),
      };
    },
  });
}
