import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { Database } from '../../core/ports/database.ts';
import { Search } from '../../core/ports/search.ts';
import { EventLog } from '../../core/ports/events.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Auth } from '../../core/ports/auth.ts';
import { createSchemaValidator, DEFAULT_SCHEMA_DIR } from './schema-validation.ts';
import { createDiscoveryProjection, DiscoveryProjection } from './projection.ts';
import type { DiscoveryContext } from './context.ts';
import { BrandDirectory, PropertyDirectory } from '../../core/ports/directory.ts';
import { catalogEndpoints } from './endpoints/catalog.ts';
import { searchEndpoints } from './endpoints/search.ts';
import { publisherEndpoints } from './endpoints/publishers.ts';
import { lookupEndpoints } from './endpoints/lookups.ts';
import { toolEndpoints } from './endpoints/tools.ts';

const options = v.object({
  /** Directory of the published JSON schemas (adagents.json, brand.json and their $refs). */
  schemaDir: v.optional(v.string(), DEFAULT_SCHEMA_DIR),
});

/**
 * Registry discovery: the member agent catalog, inventory search (through the Search port),
 * publishers, operators, lookups, two-sided authorization checks and adagents.json tools. Owns
 * the registry_ tables and provides DiscoveryProjection for the crawl pipeline.
 */
export default definePlugin({
  name: 'registry-agents',
  provides: [DiscoveryProjection],
  requires: [Database],
  optional: [Search, EventLog, Auth, BrandDirectory, PropertyDirectory],
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  register(ctx) {
    const db = ctx.get(Database);
    const context: DiscoveryContext = {
      db,
      clock: ctx.get(Clock),
      search: () => ctx.tryGet(Search),
      events: () => ctx.tryGet(EventLog),
      brands: () => ctx.tryGet(BrandDirectory),
      hostedProperties: () => ctx.tryGet(PropertyDirectory),
      schemas: createSchemaValidator(ctx.options.schemaDir),
    };
    ctx.provide(DiscoveryProjection, createDiscoveryProjection(db, context.search));
    ctx.get(Endpoints).add(
      ...searchEndpoints(context),
      ...catalogEndpoints(context),
      ...publisherEndpoints(context),
      ...lookupEndpoints(context),
      ...toolEndpoints(context),
    );
  },
});
