import * as v from 'valibot';
import type { Token } from '../../core/token.ts';
import { optional } from '../../core/plugin.ts';
import type { Logger } from '../../core/log.ts';
import { Endpoints, type EndpointDefinition } from '../../core/endpoint.ts';
import { Database, type DatabasePort, type Queryable } from '../../core/ports/database.ts';
import { Clock, type ClockPort } from '../../core/ports/clock.ts';
import { Ids, type IdsPort } from '../../core/ports/ids.ts';
import { EventLog, type EventLogPort } from '../../core/ports/events.ts';
import { Ownership, type OwnershipPort } from '../../core/ports/ownership.ts';
import { Crawler, type CrawlerPort } from '../../core/ports/crawler.ts';
import type { AuthoritativeRecordsPort } from '../../core/ports/authoritative-records.ts';
import type { DirectoryPort } from '../../core/ports/directory.ts';
import { EntryCache } from './cache.ts';
import { backfillSkeletons, type RevisionTables } from './store.ts';
import type { RevisionDeps } from './endpoints.ts';

/** What one revisioned registry (brands, hosted properties) is made of; its plugin owns the tables and wires the parts. */
export interface RevisionedRegistry<D, M> {
  tables: RevisionTables;
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

/** The options of a revisioned registry plugin. */
export const revisionedOptions = v.object({
  /** Saves (and rollbacks) one organization may make per hour, brands and properties together. */
  orgSavesPerHour: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 30),
  /** ... and per day. */
  orgSavesPerDay: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 200),
  /** Brands: where a domain's homepage is fetched for enrichment (tests point it at loopback). */
  enrichOrigin: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\/\{domain\}(:\d+)?$/, 'must look like https://{domain}')), 'https://{domain}'),
  /** Brands: how long an enrichment is reused before the homepage is fetched again. */
  enrichTtlSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60)), 86_400),
});

export const revisionedEnv = {
  ORG_SAVES_PER_HOUR: { path: 'orgSavesPerHour', type: 'int' },
  ORG_SAVES_PER_DAY: { path: 'orgSavesPerDay', type: 'int' },
} as const;

/** The ports a revisioned registry plugin declares. */
export const revisionedDeps = {
  db: Database,
  clock: Clock,
  ids: Ids,
  endpoints: Endpoints,
  events: optional(EventLog),
  ownership: optional(Ownership),
  crawler: optional(Crawler),
};

type Deps = {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  events: EventLogPort | undefined;
  ownership: OwnershipPort | undefined;
  crawler: CrawlerPort | undefined;
};

/**
 * A registry of domain entries with revision history, authoritative records from crawled files,
 * a NOTIFY-invalidated resolve cache and a site-search directory. Builds the parts; the owning plugin
 * provides the ports, adds the endpoints and runs the lifecycle.
 */
export function revisionedRegistry<D, M>(spec: RevisionedRegistry<D, M>, deps: Deps, options: v.InferOutput<typeof revisionedOptions>, logger: Logger) {
  const { db, clock, ids, events, ownership, crawler } = deps;
  const cache = new EntryCache<D>(spec.tables.entries);
  const provided: Array<[Token<any>, unknown]> = [
    [spec.directory, { search: (term: string, limit: number) => spec.search(db, term, limit) }],
    [
      spec.records,
      {
        async record(tx: Queryable, domain: string, document: Record<string, unknown>) {
          await spec.record(tx, domain, document, { newId: ids.uuid7, now: clock.now() });
        },
      },
    ],
    ...(spec.ports ?? []).map((port): [Token<any>, unknown] => [port.token, port.make(db, cache)]),
  ];
  const orgCaps = { perHour: options.orgSavesPerHour, perDay: options.orgSavesPerDay };
  const enrich = { crawler, origin: options.enrichOrigin, ttlSeconds: options.enrichTtlSeconds };
  let unfollow: (() => Promise<void>) | undefined;
  return {
    provided,
    endpoints: spec.endpoints({ db, clock, ids, events, ownership, orgCaps, enrich }, cache),
    lifecycle: {
      async start() {
        await backfillSkeletons(db, spec.tables);
        unfollow = await cache.follow(db, logger);
      },
      stop: () => unfollow?.(),
    },
  };
}
