import { BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import { BrandDirectory, type BrandMatch } from '../../core/ports/directory.ts';
import { sql } from '../../core/sql.ts';
import { definePlugin } from '../../core/plugin.ts';
import { revisionedDeps, revisionedEnv, revisionedOptions, revisionedRegistry, type RevisionedRegistry } from '../../lib/revisioned/registry.ts';
import { revisionTablesDdl, skeletonDdl, skeletonResetDdl } from '../../lib/revisioned/store.ts';
import { recordBrandJson } from './authoritative.ts';
import { BRAND_TABLES } from './tables.ts';
import { brandEndpoints } from './endpoints.ts';
import { BrandLookup } from '../../core/ports/brand-lookup.ts';
import { brandLookup } from './lookup.ts';
import { BrandProfiles } from '../../core/ports/brand-profiles.ts';
import { brandProfiles } from './profiles.ts';
import { BrandHolders } from '../../core/ports/brand-holders.ts';
import { brandHolders } from './holders.ts';
import type { BrandData } from './schemas.ts';

const SPEC: RevisionedRegistry<BrandData, BrandMatch> = {
  tables: BRAND_TABLES,
  records: BrandJsonRecords,
  record: (tx, domain, document, ids) => recordBrandJson(tx, domain, document, ids),
  directory: BrandDirectory,
  // strpos: the term is a literal substring (no LIKE wildcards to escape).
  search: (db, term, limit) =>
    db.query<BrandMatch>(sql`
      SELECT domain, data->>'brand_name' AS name, source FROM brands
      WHERE strpos(domain, ${term}::text) > 0 OR strpos(lower(data->>'brand_name'), ${term}::text) > 0
      ORDER BY domain LIMIT ${limit}::int`),
  endpoints: brandEndpoints,
  // Creative and brand agents in the same deployment resolve brands here (same cache as the resolve endpoint).
  ports: [
    { token: BrandLookup, make: (db, cache) => brandLookup(db, cache) },
    { token: BrandProfiles, make: (db, cache) => brandProfiles(db, cache) },
    // The brand agent weighs registry proofs of domain control by who holds the brand's entry.
    { token: BrandHolders, make: (db, cache) => brandHolders(db, cache) },
  ],
};

/** Brand resolution and community brand saves with revision history. */
export default definePlugin({
  name: 'registry-brands',
  options: revisionedOptions,
  env: revisionedEnv,
  provides: [BrandJsonRecords, BrandDirectory, BrandLookup, BrandProfiles, BrandHolders],
  deps: revisionedDeps,
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
    {
      version: 4,
      name: 'brand_enrichments',
      // Homepage enrichment results, reused for a TTL by every instance.
      sql: 'CREATE TABLE brand_enrichments (domain text PRIMARY KEY, result jsonb NOT NULL, fetched_at timestamptz NOT NULL);',
    },
  ],
  init({ endpoints, ...deps }, kernel) {
    const registry = revisionedRegistry(SPEC, deps, kernel.options, kernel.logger);
    for (const [token, value] of registry.provided) kernel.provide(token, value);
    endpoints.add(...registry.endpoints);
    return registry.lifecycle;
  },
});
