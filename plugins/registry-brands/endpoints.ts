import * as v from 'valibot';
import { defineEndpoint, qInt, Reply, type EndpointDefinition } from '../../core/endpoint.ts';
import { sql } from '../../core/sql.ts';
import { findEntry, type Entry } from '../../lib/revisioned/store.ts';
import type { EntryCache } from '../../lib/revisioned/cache.ts';
import { revisionEndpoints, saveLimits, type RevisionDeps } from '../../lib/revisioned/endpoints.ts';
import { likePattern } from '../../lib/revisioned/search.ts';
import { BRAND_TABLES } from './tables.ts';
import { registryItem, resolution } from './resolve.ts';
import * as s from './schemas.ts';
import { enrichEndpoint } from './enrich/endpoint.ts';
import { brandFindOut, brandJsonOut, brandRegistryOut, brandResolution } from './responses.ts';

export function brandEndpoints(deps: RevisionDeps, cache: EntryCache<any>): EndpointDefinition[] {
  const { db } = deps;
  const tags = ['Brands'];
  const shared = revisionEndpoints<s.BrandData, s.SaveBody>(
    {
      base: '/api/brands',
      tag: 'Brands',
      tables: BRAND_TABLES,
      saveSource: 'community',
      saveBody: s.saveBody,
      domainOf: (body) => body.domain,
      toData: ({ domain: _d, edit_summary: _e, ...data }) => data,
      resolution,
      resolutionSchema: brandResolution,
      events: (outcome, actor) => [
        {
          event_type: outcome.created ? 'brand.created' : 'brand.updated',
          entity_type: 'brand',
          entity_id: outcome.entry.id,
          actor,
          payload: {
            domain: outcome.entry.domain,
            brand_name: outcome.entry.data.brand_name,
            source: outcome.entry.source,
            revision_number: outcome.entry.revision_number,
          },
        },
      ],
      saveResult: ({ created, entry }, domain) =>
        created
          ? { success: true, message: `Brand ${domain} created`, domain, id: entry.id }
          : { success: true, message: `Brand ${domain} updated`, domain, id: entry.id, revision_number: entry.revision_number },
    },
    deps,
    cache,
  );

  return [
    ...shared.endpoints,
    enrichEndpoint(deps, shared.write),
    defineEndpoint({
      method: 'POST',
      path: '/api/brands/discovered/community',
      success: { schema: shared.saveSchema },
      summary: 'Legacy brand submission; same rules as /api/brands/save',
      description: 'Deprecated: use POST /api/brands/save.',
      tags,
      auth: 'required',
      tier: 'member',
      body: s.saveBody,
      errors: [403, 409],
      rateLimits: saveLimits('brand', deps.orgCaps),
      async handler({ body, principal }) {
        return new Reply(200, await shared.save(body, principal!), { deprecation: 'true', link: '</api/brands/save>; rel="successor-version"' });
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/api/brands/brand-json',
      tool: 'get_brand_json',
      success: { schema: brandJsonOut },
      summary: 'The stored authoritative brand.json of a domain',
      tags,
      query: s.domainQuery,
      errors: [404],
      async handler({ query }) {
        const entry = await findEntry<s.BrandData>(db, BRAND_TABLES, query.domain);
        if (!entry?.authoritative) return new Reply(404, { error: 'not_found', message: `No brand.json is stored for ${query.domain}`, domain: query.domain });
        return {
          domain: entry.domain,
          url: `https://${entry.domain}/.well-known/brand.json`,
          data: entry.authoritative,
          fetched_at: new Date(entry.updated_at).toISOString(),
        };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/api/brands/find',
      tool: 'find_company',
      success: { schema: brandFindOut },
      summary: 'Find brands by name or domain (the official client findCompany): exact matches first, then prefixes, then substrings',
      tags,
      query: v.object({
        q: v.pipe(v.string('is required'), v.trim(), v.minLength(2, 'must be at least 2 characters'), v.maxLength(200, 'must be at most 200 characters')),
        limit: qInt(1, 50, 10),
      }),
      errors: [400],
      async handler({ query }) {
        // strpos: the term is a literal substring (no LIKE wildcards to escape).
        const term = query.q.toLowerCase();
        const rows = await db.query<Entry<s.BrandData>>(sql`
          SELECT id::text, domain, source, data, authoritative, owner_org_id::text, revision_number, created_at, updated_at FROM brands
          WHERE strpos(domain, ${term}::text) > 0 OR strpos(lower(data->>'brand_name'), ${term}::text) > 0
          ORDER BY CASE WHEN domain = ${term}::text OR lower(data->>'brand_name') = ${term}::text THEN 0
                        WHEN starts_with(domain, ${term}::text) OR starts_with(lower(data->>'brand_name'), ${term}::text) THEN 1 ELSE 2 END,
                   domain
          LIMIT ${query.limit}::int`);
        return { results: rows.map((entry) => ({ domain: entry.domain, ...resolution(entry) })) };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/api/brands/registry',
      tool: 'list_brands',
      success: { schema: brandRegistryOut },
      summary: 'List brands with search and pagination',
      tags,
      query: s.registryQuery,
      async handler({ query }) {
        const pattern = query.search ? likePattern(query.search) : null;
        const where = sql.join(
          [
            pattern ? sql`(domain LIKE ${pattern}::text OR lower(data->>'brand_name') LIKE ${pattern}::text)` : sql`true`,
            query.source ? sql`source = ${query.source}::text` : sql`true`,
          ],
          ' AND ',
        );
        const rows = await db.query<Entry<s.BrandData>>(sql`
          SELECT id::text, domain, source, data, authoritative, owner_org_id::text, revision_number, created_at, updated_at
          FROM brands WHERE ${where} ORDER BY domain LIMIT ${query.limit}::int OFFSET ${query.offset}::int`);
        const [stats] = await db.query<Record<string, number>>(sql`
          SELECT count(*)::int AS total,
                 count(*) FILTER (WHERE source = 'hosted')::int AS hosted,
                 count(*) FILTER (WHERE source = 'brand_json')::int AS brand_json,
                 count(*) FILTER (WHERE source = 'community')::int AS community,
                 count(*) FILTER (WHERE source = 'enriched')::int AS enriched,
                 count(*) FILTER (WHERE coalesce(data->>'keller_type', 'master') = 'master')::int AS houses,
                 count(*) FILTER (WHERE data->>'keller_type' = 'sub_brand')::int AS sub_brands,
                 count(*) FILTER (WHERE data ? 'brand_manifest')::int AS with_manifest,
                 count(*) FILTER (WHERE ${where})::int AS matching
          FROM brands`);
        const { matching, ...rest } = stats!;
        return { brands: rows.map(registryItem), total: matching, limit: query.limit, offset: query.offset, stats: rest };
      },
    }),
  ];
}
