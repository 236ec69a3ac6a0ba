import * as v from 'valibot';
import { defineEndpoint, Reply } from '../../../core/endpoint.ts';
import { invalid, notFound } from '../../../core/errors.ts';
import { sql } from '../../../core/sql.ts';
import { adagentsWarnings } from '../../../lib/registry-documents/schema-validation.ts';
import { domainOrThrow, normalizeAgentUrl } from '../urls.ts';
import type { DiscoveryContext } from '../context.ts';
import { adagentsCreateOut, adagentsValidateOut, manifestRefsOut, propertiesValidateOut, siteSearchOut } from '../responses.ts';

const createBody = v.object({
  authorized_agents: v.pipe(
    v.array(
      v.looseObject({
        url: v.pipe(v.string(), v.maxLength(2048)),
        authorized_for: v.pipe(v.string(), v.minLength(1), v.maxLength(500)),
        authorization_type: v.optional(v.picklist(['property_ids', 'property_tags', 'inline_properties', 'publisher_properties', 'signal_ids', 'signal_tags'])),
        property_ids: v.optional(v.array(v.string())),
        property_tags: v.optional(v.array(v.string())),
        delegation_type: v.optional(v.picklist(['direct', 'delegated', 'ad_network'])),
      }),
    ),
    v.minLength(1, 'needs at least one agent'),
    v.maxLength(1000),
  ),
  properties: v.optional(v.pipe(v.array(v.looseObject({})), v.maxLength(10000))),
  contact: v.optional(v.looseObject({ name: v.pipe(v.string(), v.minLength(1), v.maxLength(255)) })),
  catalog_etag: v.optional(v.string()),
});

export function toolEndpoints(c: DiscoveryContext) {
  const storedDoc = async (domain: string) => {
    const [row] = await c.db.query<{ adagents: unknown; has_adagents: boolean; last_validated: Date | null }>(sql`
      SELECT adagents, has_adagents, last_validated FROM registry_publishers WHERE domain = ${domain}::text`);
    return row?.has_adagents ? row : null;
  };
  const verdict = (doc: unknown) => {
    const errors = c.schemas.adagents(doc);
    const d = (doc ?? {}) as Record<string, any>;
    return {
      valid: errors.length === 0,
      errors,
      warnings: errors.length === 0 ? adagentsWarnings(doc) : [],
      agent_count: Array.isArray(d.authorized_agents) ? d.authorized_agents.length : 0,
      property_count: Array.isArray(d.properties) ? d.properties.length : 0,
    };
  };

  const validate = defineEndpoint({
    method: 'POST',
    path: '/api/adagents/validate',
    tool: 'validate_adagents',
    success: { schema: adagentsValidateOut },
    summary: 'Validate an adagents.json document, or the one stored for a domain, against the JSON schema',
    tags: ['Validation tools'],
    body: v.pipe(
      v.object({ domain: v.optional(v.pipe(v.string(), v.maxLength(300))), document: v.optional(v.unknown()) }),
      v.check((b) => (b.domain === undefined) !== (b.document === undefined), 'give exactly one of domain or document'),
    ),
    errors: [400, 404],
    async handler({ body }) {
      if (body.document !== undefined) return { success: true, data: verdict(body.document), timestamp: c.clock.now().toISOString() };
      const domain = domainOrThrow(body.domain!);
      const row = await storedDoc(domain);
      if (!row)
        return new Reply(404, {
          success: false,
          error: 'not_found',
          message: `no adagents.json is stored for ${domain}`,
          timestamp: c.clock.now().toISOString(),
        });
      return { success: true, data: { domain, ...verdict(row.adagents) }, timestamp: c.clock.now().toISOString() };
    },
  });

  const create = defineEndpoint({
    method: 'POST',
    path: '/api/adagents/create',
    tool: 'create_adagents',
    success: { schema: adagentsCreateOut },
    summary: 'Generate a schema-valid adagents.json document',
    tags: ['Validation tools'],
    body: createBody,
    errors: [400],
    async handler({ body }) {
      const agents = body.authorized_agents.map((a, i) => {
        const url = normalizeAgentUrl(a.url);
        if (!url) throw invalid(`body.authorized_agents[${i}].url: must be an absolute http(s) URL`, `authorized_agents[${i}].url`);
        const type = a.authorization_type ?? (a.property_ids ? 'property_ids' : a.property_tags ? 'property_tags' : undefined);
        return { ...a, url, ...(type ? { authorization_type: type } : {}) };
      });
      const document: Record<string, unknown> = {
        $schema: '/schemas/3.1.19/adagents.json',
        ...(body.contact ? { contact: body.contact } : {}),
        ...(body.properties?.length ? { properties: body.properties } : {}),
        ...(body.catalog_etag ? { catalog_etag: body.catalog_etag } : {}),
        authorized_agents: agents,
        last_updated: c.clock.now().toISOString(),
      };
      const errors = c.schemas.adagents(document);
      if (errors.length)
        return new Reply(400, {
          success: false,
          error: 'invalid_document',
          message: 'the generated document does not validate',
          errors,
          timestamp: c.clock.now().toISOString(),
        });
      return {
        success: true,
        data: { document, json: JSON.stringify(document, null, 2), warnings: adagentsWarnings(document) },
        timestamp: c.clock.now().toISOString(),
      };
    },
  });

  const propertiesValidate = defineEndpoint({
    method: 'GET',
    path: '/api/properties/validate',
    tool: 'validate_property',
    success: { schema: propertiesValidateOut },
    summary: 'Validation of the stored adagents.json of a domain',
    tags: ['Validation tools'],
    query: v.object({ domain: v.pipe(v.string('is required'), v.maxLength(300)) }),
    errors: [400, 404],
    async handler({ query }) {
      const domain = domainOrThrow(query.domain);
      const row = await storedDoc(domain);
      if (!row) throw notFound(`no adagents.json is stored for ${domain}`);
      return { domain, ...verdict(row.adagents), last_validated: row.last_validated ? new Date(row.last_validated).toISOString() : null };
    },
  });

  const search = defineEndpoint({
    method: 'GET',
    path: '/api/search',
    tool: 'search_registry',
    success: { schema: siteSearchOut },
    summary: 'Search brands, publishers, properties and catalog agents',
    tags: ['Search'],
    query: v.object({
      q: v.pipe(v.string('is required'), v.trim(), v.minLength(2, 'must be at least 2 characters'), v.maxLength(100, 'must be at most 100 characters')),
      limit: v.optional(
        v.pipe(
          v.string(),
          v.regex(/^\d{1,3}$/, 'must be an integer from 1 to 50'),
          v.transform(Number),
          v.minValue(1, 'must be an integer from 1 to 50'),
          v.maxValue(50, 'must be an integer from 1 to 50'),
        ),
        '10',
      ),
    }),
    errors: [400],
    async handler({ query }) {
      const term = query.q.toLowerCase();
      const limit = query.limit as number;
      // strpos: a plain substring, so % and _ in q are literal characters.
      // Brands: the brands plugin's entries (community and crawled brand.json) when deployed,
      // else the operators this plugin crawled.
      const brands = c.brands
        ? await c.brands.search(term, limit)
        : await c.db.query(sql`
            SELECT domain, house_name AS name, 'brand_json' AS source FROM registry_operators
            WHERE brand_json_valid AND (strpos(domain, ${term}::text) > 0 OR EXISTS (SELECT 1 FROM unnest(brand_names) n WHERE strpos(lower(n), ${term}::text) > 0))
            ORDER BY domain LIMIT ${limit}::int`);
      const publishers = await c.db.query(sql`
        SELECT domain, adagents_valid AS has_valid_adagents FROM registry_publishers WHERE strpos(domain, ${term}::text) > 0 ORDER BY domain LIMIT ${limit}::int`);
      const properties = await c.db.query(sql`
        SELECT pub.domain AS publisher_domain, p.property_id AS id, p.name, p.property_type AS type, p.identifiers
        FROM registry_properties p JOIN registry_publishers pub ON pub.id = p.publisher_id
        WHERE p.status = 'active' AND (strpos(lower(p.name), ${term}::text) > 0
          OR EXISTS (SELECT 1 FROM registry_property_identifiers i WHERE i.property_id = p.id AND strpos(i.value, ${term}::text) > 0))
        ORDER BY p.name, pub.domain LIMIT ${limit}::int`);
      // Hosted properties (community-maintained) are kept by the properties plugin.
      const hosted = (await c.hostedProperties?.search(term, limit)) ?? [];
      const merged = [...properties.map((p: any) => ({ ...p, source: 'adagents_json' })), ...hosted.filter((h) => h.source === 'hosted')].slice(0, limit);
      // Public catalog agents by name or URL.
      const agents = await c.db.query<{ url: string; name: string | null; type: string | null }>(sql`
        SELECT a.url, a.name, a.type FROM registry_agents a
        WHERE a.owner_org_id IS NOT NULL AND a.visibility = 'public' AND (strpos(lower(coalesce(a.name, '')), ${term}::text) > 0 OR strpos(a.url, ${term}::text) > 0)
        ORDER BY a.name, a.url LIMIT ${limit}::int`);
      return { query: query.q, brands, publishers, properties: merged, agents };
    },
  });

  const manifestRefs = defineEndpoint({
    method: 'GET',
    path: '/api/manifest-refs/lookup',
    tool: 'lookup_manifest_refs',
    success: { schema: manifestRefsOut },
    summary: 'Best manifest reference (brand.json URL or brand agent) for a domain',
    tags: ['Search'],
    query: v.object({
      domain: v.pipe(v.string('is required'), v.maxLength(300)),
      type: v.optional(v.picklist(['brand.json', 'agent'], 'must be brand.json or agent')),
    }),
    errors: [400],
    async handler({ query }) {
      const domain = domainOrThrow(query.domain);
      const [op] = await c.db.query<{ brand_json_valid: boolean; has_doc: boolean }>(sql`
        SELECT brand_json_valid, brand_json IS NOT NULL AS has_doc FROM registry_operators WHERE domain = ${domain}::text`);
      const [agent] = await c.db.query<{ agent_url: string }>(sql`
        SELECT agent_url FROM registry_operator_agents WHERE operator_domain = ${domain}::text AND agent_type = 'brand' ORDER BY agent_url LIMIT 1`);
      if (op?.has_doc && query.type !== 'agent') {
        return {
          success: true,
          found: true,
          reference: {
            reference_type: 'url',
            manifest_url: `https://${domain}/.well-known/brand.json`,
            agent_url: null,
            agent_id: null,
            verification_status: op.brand_json_valid ? 'valid' : 'invalid',
          },
        };
      }
      if (agent && op?.brand_json_valid) {
        return {
          success: true,
          found: true,
          reference: { reference_type: 'agent', manifest_url: null, agent_url: agent.agent_url, agent_id: null, verification_status: 'valid' },
        };
      }
      return { success: false, found: false };
    },
  });

  return [validate, create, propertiesValidate, search, manifestRefs];
}
