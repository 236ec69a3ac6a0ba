import { defineEndpoint, type EndpointDefinition } from '../../core/endpoint.ts';
import { sql } from '../../core/sql.ts';
import type { Entry } from '../../lib/revisioned/store.ts';
import type { EntryCache } from '../../lib/revisioned/cache.ts';
import { revisionEndpoints, type RevisionDeps } from '../../lib/revisioned/endpoints.ts';
import { likePattern } from '../../lib/revisioned/search.ts';
import { PROPERTY_TABLES } from './tables.ts';
import { propertyEvents, resolution, toData } from './model.ts';
import * as s from './schemas.ts';
import { propertyRegistryOut, propertyResolution } from './responses.ts';
import { propertyCheckEndpoints } from './check.ts';

export function propertyEndpoints(deps: RevisionDeps, cache: EntryCache<any>): EndpointDefinition[] {
  const { db } = deps;
  const shared = revisionEndpoints<s.PropertyData, s.SaveBody>(
    {
      base: '/api/properties',
      tag: 'Properties',
      tables: PROPERTY_TABLES,
      saveSource: 'hosted',
      saveBody: s.saveBody,
      domainOf: (body) => body.publisher_domain,
      toData,
      resolution,
      resolutionSchema: propertyResolution,
      events: ({ entry, previous }, actor) => propertyEvents(entry.domain, entry.source, previous, entry.data, actor),
      saveResult: ({ created, entry }, domain) =>
        created
          ? { success: true, message: `Properties of ${domain} created`, id: entry.id }
          : { success: true, message: `Properties of ${domain} updated`, id: entry.id, revision_number: entry.revision_number },
    },
    deps,
    cache,
  );

  return [
    ...shared.endpoints,
    ...propertyCheckEndpoints(deps),
    defineEndpoint({
      method: 'GET',
      path: '/api/properties/registry',
      tool: 'list_properties',
      success: { schema: propertyRegistryOut },
      summary: 'List publishers with their properties, with search and pagination',
      tags: ['Properties'],
      query: s.registryQuery,
      async handler({ query }) {
        const pattern = query.search ? likePattern(query.search) : null;
        const where = sql.join(
          [
            pattern
              ? sql`(domain LIKE ${pattern}::text OR EXISTS (SELECT 1 FROM jsonb_array_elements(data->'properties') p WHERE lower(p->>'name') LIKE ${pattern}::text))`
              : sql`true`,
            query.source ? sql`source = ${query.source}::text` : sql`true`,
          ],
          ' AND ',
        );
        const rows = await db.query<Entry<s.PropertyData>>(sql`
          SELECT id::text, domain, source, data, authoritative, owner_org_id::text, revision_number, created_at, updated_at
          FROM property_entries WHERE ${where} ORDER BY domain LIMIT ${query.limit}::int OFFSET ${query.offset}::int`);
        const bySource = await db.query<{ source: string; publishers: number; properties: number }>(sql`
          SELECT source, count(*)::int AS publishers, coalesce(sum(jsonb_array_length(data->'properties')), 0)::int AS properties
          FROM property_entries WHERE ${where} GROUP BY source ORDER BY source`);
        const total = bySource.reduce((n, r) => n + r.publishers, 0);
        return {
          properties: rows.map((e) => ({
            // `domain` is what the official client reads (PropertyRegistryItem); `publisher_domain` as before.
            domain: e.domain,
            publisher_domain: e.domain,
            source: e.source,
            property_count: e.data.properties.length,
            agent_count: e.data.authorized_agents.length,
            verified: e.source === 'adagents_json',
            updated_at: new Date(e.updated_at).toISOString(),
          })),
          stats: {
            publishers: total,
            properties: bySource.reduce((n, r) => n + r.properties, 0),
            verified: bySource.find((r) => r.source === 'adagents_json')?.publishers ?? 0,
            by_source: Object.fromEntries(bySource.map((r) => [r.source, r.publishers])),
          },
          total,
          limit: query.limit,
          offset: query.offset,
        };
      },
    }),
  ];
}
