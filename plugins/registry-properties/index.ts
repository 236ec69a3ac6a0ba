import { AdagentsRecords } from '../../core/ports/authoritative-records.ts';
import { PropertyDirectory, type PropertyMatch } from '../../core/ports/directory.ts';
import { sql } from '../../core/sql.ts';
import { definePlugin } from '../../core/plugin.ts';
import { revisionedDeps, revisionedEnv, revisionedOptions, revisionedRegistry, type RevisionedRegistry } from '../../lib/revisioned/registry.ts';
import { revisionTablesDdl, skeletonDdl, skeletonResetDdl } from '../../lib/revisioned/store.ts';
import { recordAdagentsJson } from './authoritative.ts';
import { PROPERTY_TABLES } from './tables.ts';
import { propertyEndpoints } from './endpoints.ts';
import { HostedProperties } from '../../core/ports/hosted-properties.ts';
import { hostedProperties } from './hosted.ts';

const SPEC: RevisionedRegistry<unknown, PropertyMatch> = {
  tables: PROPERTY_TABLES,
  records: AdagentsRecords,
  // Crawled properties get their feed events from the discovery projection; none are emitted here.
  record: (tx, domain, document, ids) => recordAdagentsJson(tx, domain, document as Parameters<typeof recordAdagentsJson>[2], { ...ids, actor: 'crawler' }),
  directory: PropertyDirectory,
  search: (db, term, limit) =>
    db.query<PropertyMatch>(sql`
      SELECT e.domain AS publisher_domain, p->>'id' AS id, p->>'name' AS name, p->>'type' AS type, p->'identifiers' AS identifiers, e.source
      FROM property_entries e, jsonb_array_elements(e.data->'properties') p
      WHERE strpos(lower(p->>'name'), ${term}::text) > 0
         OR EXISTS (SELECT 1 FROM jsonb_array_elements(p->'identifiers') i WHERE strpos(lower(i->>'value'), ${term}::text) > 0)
      ORDER BY p->>'name', e.domain LIMIT ${limit}::int`),
  ports: [{ token: HostedProperties, make: hostedProperties }],
  endpoints: propertyEndpoints,
};

/** Property resolution per publisher domain and hosted property saves with revision history. */
export default definePlugin({
  name: 'registry-properties',
  options: revisionedOptions,
  env: revisionedEnv,
  provides: [AdagentsRecords, PropertyDirectory, HostedProperties],
  deps: revisionedDeps,
  migrations: [
    {
      version: 1,
      name: 'property_entries',
      sql: `${revisionTablesDdl('property_entries', 'property_revisions')}\nCREATE INDEX property_entries_source ON property_entries (source);`,
    },
    { version: 2, name: 'property_entries_skeleton', sql: skeletonDdl('property_entries') },
    // The confusable fact table grew (sequences such as rn/m): recompute every skeleton at start.
    { version: 3, name: 'property_entries_skeleton_facts_2', sql: skeletonResetDdl('property_entries') },
    {
      version: 4,
      name: 'property_check_reports',
      // POST /api/properties/check results, readable back for seven days.
      sql: `CREATE TABLE property_check_reports (id uuid PRIMARY KEY, summary jsonb NOT NULL, result jsonb NOT NULL,
  created_at timestamptz NOT NULL, expires_at timestamptz NOT NULL);
CREATE INDEX property_check_reports_expiry ON property_check_reports (expires_at);`,
    },
  ],
  init({ endpoints, ...deps }, kernel) {
    const registry = revisionedRegistry(SPEC, deps, kernel.options, kernel.logger);
    for (const [token, value] of registry.provided) kernel.provide(token, value);
    endpoints.add(...registry.endpoints);
    return registry.lifecycle;
  },
});
