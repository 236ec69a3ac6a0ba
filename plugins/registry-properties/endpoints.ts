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
        const [{ total } = { total: 0 }] = await db.query<{ total: number }>(sql`SELECT count(*)::int AS total FROM property_entries WHERE ${where}`);
        return {
          properties: rows.map((e) => ({
            publisher_domain: e.domain,
            source: e.source,
            property_count: e.data.properties.length,
            agent_count: e.data.authorized_agents.length,
            verified: e.source === 'adagents_json',
            updated_at: new Date(e.updated_at).toISOString(),
          })),
          total,
          limit: query.limit,
          offset: query.offset,
        };
      },
    }),
  ];
}
