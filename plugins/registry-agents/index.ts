import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { Database } from '../../core/ports/database.ts';
import { Search } from '../../core/ports/search.ts';
import { EventLog } from '../../core/ports/events.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { SearchSync, type SearchSyncPort } from '../../core/ports/search-sync.ts';
import { createSearchSync } from './search-sync.ts';
import { createSchemaValidator, DEFAULT_SCHEMA_DIR } from '../../lib/registry-documents/schema-validation.ts';
import { Discovery } from '../../core/ports/discovery.ts';
import { createDiscovery } from './discovery.ts';
import type { DiscoveryContext } from './context.ts';
import { BrandDirectory, PropertyDirectory } from '../../core/ports/directory.ts';
import { HostedProperties } from '../../core/ports/hosted-properties.ts';
import { PublisherCatalog } from '../../core/ports/publisher-catalog.ts';
import { publisherCatalog } from './catalog.ts';
import { AdagentsRecords } from '../../core/ports/authoritative-records.ts';
import { recordUnrecordedPublishers } from './store/adagents-records.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { runHealthChecks } from './health/checks.ts';
import { catalogEndpoints } from './endpoints/catalog.ts';
import { searchEndpoints } from './endpoints/search.ts';
import { publisherEndpoints } from './endpoints/publishers.ts';
import { lookupEndpoints } from './endpoints/lookups.ts';
import { toolEndpoints } from './endpoints/tools.ts';
import { complianceEndpoints } from './endpoints/compliance.ts';

const ms = (min: number) => v.pipe(v.number(), v.integer(), v.minValue(min));

const options = v.object({
  /** Directory of the published JSON schemas (adagents.json, brand.json and their $refs). */
  schemaDir: v.optional(v.string(), DEFAULT_SCHEMA_DIR),
  /** How often the health job looks for agents due a probe; 0 = no probes. */
  healthIntervalMs: v.optional(v.union([v.literal(0), ms(1000)]), 60_000),
  /** Time between two probes of one enrolled agent. */
  healthEverySeconds: v.optional(ms(60), 3600),
  /** Agents probed per run. */
  healthBatch: v.optional(v.pipe(ms(1), v.maxValue(500)), 20),
  /** Time limit of each request of a probe. */
  healthTimeoutMs: v.optional(v.pipe(ms(100), v.maxValue(60_000)), 10_000),
  /** How often the search outbox is polled (writers of this instance also wake it at once). */
  searchDrainMs: v.optional(ms(10), 1000),
  /** Agents applied to the index per write. */
  searchBatch: v.optional(v.pipe(ms(1), v.maxValue(10_000)), 500),
  /** First retry delay after the index refused a write; doubles per attempt up to searchRetryMaxMs. */
  searchRetryMs: v.optional(ms(10), 1000),
  searchRetryMaxMs: v.optional(ms(10), 300_000),
  /** How often publishers with a valid adagents.json not yet known to property resolution are recorded; 0 = never. */
  recordIntervalMs: v.optional(v.union([v.literal(0), ms(1000)]), 60_000),
});

/**
 * Registry discovery: the member agent catalog, inventory search (through the Search port),
 * publishers, operators, lookups, two-sided authorization checks and adagents.json tools, and the
 * health / compliance / verification probes of enrolled agents. Owns the registry_ tables; the
 * crawl pipeline reaches them through the Discovery port.
 */
export default definePlugin({
  name: 'registry-agents',
  provides: [Discovery, SearchSync, PublisherCatalog],
  deps: {
    db: Database,
    clock: Clock,
    ids: Ids,
    endpoints: Endpoints,
    search: optional(Search),
    events: optional(EventLog),
    brands: optional(BrandDirectory),
    crawler: optional(Crawler),
    hostedProperties: optional(PropertyDirectory),
    hosted: optional(HostedProperties),
    adagentsRecords: optional(AdagentsRecords),
  },
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, ids, endpoints, search, events, brands, hostedProperties, hosted, crawler, adagentsRecords }, kernel) {
    const o = kernel.options;
    // Profile changes are queued in the writer's transaction (store/search-outbox.ts); this job
    // applies them to the Search port and rebuilds the index when it is behind the database.
    const drainer = search
      ? createSearchSync(
          { db, search, clock, ids, logger: kernel.logger },
          { batch: o.searchBatch, retryBaseMs: o.searchRetryMs, retryMaxMs: o.searchRetryMaxMs },
        )
      : null;
    const job = drainer
      ? kernel.scheduler.add({ name: 'search-outbox', intervalMs: o.searchDrainMs, backoffMaxMs: 60_000, run: () => drainer.runJob() })
      : null;
    kernel.provide(SearchSync, drainer ?? noSearchSync);
    const context: DiscoveryContext = {
      db,
      clock,
      ids,
      search,
      searchChanged: () => job?.wake(),
      events,
      brands,
      hostedProperties,
      hosted,
      schemas: createSchemaValidator(o.schemaDir),
    };
    kernel.provide(Discovery, createDiscovery(db, ids, context.searchChanged));
    // Read-only lookups of publishers' properties and collections (property and collection lists resolve through it).
    kernel.provide(PublisherCatalog, publisherCatalog(db));
    endpoints.add(
      ...searchEndpoints(context),
      ...catalogEndpoints(context),
      ...publisherEndpoints(context),
      ...lookupEndpoints(context),
      ...toolEndpoints(context),
      ...complianceEndpoints(context),
    );
    if (adagentsRecords && o.recordIntervalMs > 0) {
      // Publishers the projection holds but property resolution does not (see store/adagents-records.ts).
      kernel.scheduler.add({
        name: 'record-adagents',
        intervalMs: o.recordIntervalMs,
        backoffMaxMs: 10 * o.recordIntervalMs,
        run: async () => ((await recordUnrecordedPublishers(db, adagentsRecords, clock)) >= 100 ? 'again' : undefined),
      });
    }
    if (crawler && o.healthIntervalMs > 0) {
      // Probes of enrolled agents: health, compliance of their capabilities answer, the verification badge.
      const settings = {
        namespace: kernel.config.protocol.namespace,
        everyMs: o.healthEverySeconds * 1000,
        batch: o.healthBatch,
        timeoutMs: o.healthTimeoutMs,
      };
      kernel.scheduler.add({
        name: 'health',
        intervalMs: o.healthIntervalMs,
        runAtStart: false,
        backoffMaxMs: 10 * o.healthIntervalMs,
        run: async () =>
          (await runHealthChecks({ db, clock, ids, crawler, events, logger: kernel.logger }, settings)) >= settings.batch ? 'again' : undefined,
      });
    }
  },
});

const noSearch = () => Promise.reject(new Error('no Search adapter is deployed (set SEARCH=postgres or SEARCH=meilisearch)'));

/** Without a Search adapter, changes stay queued; the first deployment with one rebuilds the index anyway. */
const noSearchSync: SearchSyncPort = { drain: noSearch, reindex: noSearch, status: noSearch };
