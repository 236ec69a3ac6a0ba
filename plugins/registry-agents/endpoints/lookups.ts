import * as v from 'valibot';
import { defineEndpoint } from '../../../core/endpoint.ts';
import { sql } from '../../../core/sql.ts';
import { agentUrlOrThrow, domainOrThrow, identifierCandidates, normalizeAgentUrl } from '../urls.ts';
import {
  checkAgentAuthorization,
  hostedCandidates,
  propertiesByIdentifier,
  propertiesForSelector,
  type CandidateProperty,
  type Selector,
} from '../authorization.ts';
import type { DiscoveryContext } from '../context.ts';
import { agentDomainsOut, expandOut, lookupDomainOut, lookupPropertyOut, productAuthorizationOut, propertyAuthorizationOut } from '../responses.ts';

const identifierType = v.pipe(v.string('is required'), v.regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be an identifier type such as domain or bundle_id'));
const identifierValue = v.pipe(v.string('is required'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(500));
const DELEGATION = ['direct', 'delegated', 'ad_network'] as const;

const selector = v.pipe(
  v.object({
    publisher_domain: v.pipe(v.string(), v.maxLength(300)),
    selection_type: v.picklist(['all', 'by_id', 'by_tag'], 'must be all, by_id or by_tag'),
    property_ids: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), v.minLength(1), v.maxLength(1000))),
    property_tags: v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(200))), v.minLength(1), v.maxLength(100))),
  }),
  v.check((s) => s.selection_type !== 'by_id' || !!s.property_ids, 'by_id needs property_ids'),
  v.check((s) => s.selection_type !== 'by_tag' || !!s.property_tags, 'by_tag needs property_tags'),
);
const productBody = v.object({
  agent_url: v.pipe(v.string(), v.maxLength(2048)),
  publisher_properties: v.pipe(v.array(selector), v.minLength(1, 'needs at least one selector'), v.maxLength(100, 'accepts at most 100 selectors')),
});

const propertyView = (p: CandidateProperty) => ({ property_rid: p.property_rid, id: p.property_id, name: p.name, type: p.property_type });

export function lookupEndpoints(c: DiscoveryContext) {
  /** Public sales agents whose operator's brand.json declares the domain as a property (whether or not the publisher authorizes them). */
  const salesAgentsClaiming = async (domain: string) =>
    (
      await c.db.query<{ url: string }>(sql`
        SELECT DISTINCT a.url FROM registry_agents a
        JOIN registry_operator_properties d ON d.operator_domain = a.operator_domain
        JOIN registry_operators o ON o.domain = d.operator_domain AND o.brand_json_valid
        WHERE a.type = 'sales' AND a.owner_org_id IS NOT NULL AND a.visibility = 'public' AND d.identifier = ${domain}::text
        ORDER BY a.url`)
    ).map((r) => r.url);

  const byDomain = defineEndpoint({
    method: 'GET',
    path: '/api/registry/lookup/domain/{domain}',
    tool: 'lookup_domain',
    success: { schema: lookupDomainOut },
    summary: 'Agents authorized by a publisher domain',
    tags: ['Lookups'],
    params: v.object({ domain: v.pipe(v.string(), v.maxLength(300)) }),
    errors: [400],
    async handler({ params }) {
      const domain = domainOrThrow(params.domain);
      const [pub] = await c.db.query<{ id: string; adagents_valid: boolean }>(
        sql`SELECT id::text, adagents_valid FROM registry_publishers WHERE domain = ${domain}::text`,
      );
      const claiming = await salesAgentsClaiming(domain);
      if (pub?.adagents_valid) {
        const agents = await c.db.query<{ url: string; authorized_for: string | null; delegation_types: string[] }>(sql`
            SELECT a.url, pa.authorized_for, pa.delegation_types FROM registry_publisher_agents pa JOIN registry_agents a ON a.id = pa.agent_id
            WHERE pa.publisher_id = ${pub.id}::uuid ORDER BY a.url`);
        const authorized = new Set(agents.map((a) => a.url));
        return {
          domain,
          source: 'adagents_json',
          adagents_valid: true,
          authorized_agents: agents,
          sales_agents_claiming: claiming.filter((u) => !authorized.has(u)),
          count: agents.length,
        };
      }
      // A hosted entry speaks for a publisher that has no (valid) adagents.json.
      const hosted = await c.hosted?.publisher(domain);
      if (hosted) {
        const agents = hosted.authorized_agents.map((a) => ({
          url: normalizeAgentUrl(a.url) ?? a.url,
          authorized_for: a.authorized_for,
          delegation_types: [] as string[],
        }));
        const authorized = new Set(agents.map((a) => a.url));
        return {
          domain,
          source: 'hosted',
          adagents_valid: false,
          authorized_agents: agents,
          sales_agents_claiming: claiming.filter((u) => !authorized.has(u)),
          count: agents.length,
        };
      }
      if (pub) return { domain, source: 'adagents_json', adagents_valid: false, authorized_agents: [], sales_agents_claiming: claiming, count: 0 };
      return { domain, authorized_agents: [], sales_agents_claiming: claiming };
    },
  });

  const byProperty = defineEndpoint({
    method: 'GET',
    path: '/api/registry/lookup/property',
    tool: 'lookup_property',
    success: { schema: lookupPropertyOut },
    summary: 'Agents authorized for a property identifier',
    tags: ['Lookups'],
    query: v.object({ type: identifierType, value: identifierValue }),
    errors: [400],
    async handler({ query }) {
      const properties = await propertiesByIdentifier(c.db, query.type, identifierCandidates(query.type, query.value));
      const grants = properties.length
        ? await c.db.query<{ agent_url: string; property_rid: string; delegation_type: string | null; authorized_for: string | null }>(sql`
            SELECT a.url AS agent_url, z.property_id::text AS property_rid, z.delegation_type, z.authorized_for
            FROM registry_authorizations z JOIN registry_agents a ON a.id = z.agent_id
            WHERE z.property_id = ANY(${properties.map((p) => p.property_rid)}::uuid[]) ORDER BY a.url`)
        : [];
      const agents = grants.map((g) => {
        const p = properties.find((x) => x.property_rid === g.property_rid)!;
        return {
          agent_url: g.agent_url,
          property: propertyView(p),
          publisher_domain: p.publisher_domain,
          delegation_type: g.delegation_type,
          authorized_for: g.authorized_for,
        };
      });
      return { type: query.type, value: query.value, agents, count: agents.length };
    },
  });

  const agentDomains = defineEndpoint({
    method: 'GET',
    path: '/api/registry/lookup/agent/{agentUrl}/domains',
    tool: 'lookup_agent_domains',
    success: { schema: agentDomainsOut },
    summary: 'Publisher domains that authorize an agent (agentUrl URL-encoded)',
    tags: ['Lookups'],
    params: v.object({ agentUrl: v.pipe(v.string(), v.maxLength(2048)) }),
    errors: [400],
    async handler({ params }) {
      let raw = params.agentUrl;
      try {
        raw = decodeURIComponent(raw);
      } catch {
        // already decoded by the host
      }
      const url = agentUrlOrThrow(raw, 'agentUrl');
      const rows = await c.db.query<{ domain: string }>(sql`
        SELECT pub.domain FROM registry_publisher_agents pa
        JOIN registry_agents a ON a.id = pa.agent_id JOIN registry_publishers pub ON pub.id = pa.publisher_id AND pub.adagents_valid
        WHERE a.url = ${url}::text ORDER BY pub.domain`);
      return { agent_url: url, domains: rows.map((r) => r.domain), count: rows.length };
    },
  });

  const propertyAuthorization = defineEndpoint({
    method: 'GET',
    path: '/api/registry/validate/property-authorization',
    tool: 'validate_property_authorization',
    success: { schema: propertyAuthorizationOut },
    summary: 'Real-time two-sided authorization check (publisher adagents.json AND operator brand.json)',
    tags: ['Lookups'],
    query: v.object({
      agent_url: v.pipe(v.string('is required'), v.maxLength(2048)),
      identifier_type: identifierType,
      identifier_value: identifierValue,
      delegation_type: v.optional(v.picklist(DELEGATION, 'must be direct, delegated or ad_network')),
    }),
    errors: [400],
    async handler({ query }) {
      const agentUrl = agentUrlOrThrow(query.agent_url);
      const now = c.clock.now();
      const values = identifierCandidates(query.identifier_type, query.identifier_value);
      let candidates = await propertiesByIdentifier(c.db, query.identifier_type, values);
      // Without a crawled property, a hosted entry carrying the identifier is the publisher side.
      if (candidates.length === 0) candidates = await hostedCandidates(c.hosted, query.identifier_type, values, agentUrl);
      const verdict = await checkAgentAuthorization(c.db, agentUrl, candidates, { claimedDelegation: query.delegation_type ?? null, now });
      return {
        agent_url: agentUrl,
        identifier_type: query.identifier_type,
        identifier_value: query.identifier_value,
        authorized: verdict.authorized,
        failed_side: verdict.failed_side,
        ...(verdict.property
          ? {
              property_id: verdict.property.property_id ?? verdict.property.property_rid,
              property_rid: verdict.property.property_rid,
              publisher_domain: verdict.property.publisher_domain,
            }
          : {}),
        checks: { publisher: verdict.publisher_check, operator: verdict.operator_check },
        checked_at: now.toISOString(),
      };
    },
  });

  const productAuthorization = defineEndpoint({
    method: 'POST',
    path: '/api/registry/validate/product-authorization',
    tool: 'validate_product_authorization',
    success: { schema: productAuthorizationOut },
    summary: "Check an agent against a product's publisher_properties selectors (both sides per property)",
    tags: ['Lookups'],
    body: productBody,
    errors: [400],
    async handler({ body }) {
      const agentUrl = agentUrlOrThrow(body.agent_url);
      const now = c.clock.now();
      let requested = 0;
      let authorized = 0;
      const selectors = [];
      for (const raw of body.publisher_properties) {
        const s: Selector = { ...raw, publisher_domain: domainOrThrow(raw.publisher_domain, 'publisher_domain') };
        const { found, missing_ids } = await propertiesForSelector(c.db, s);
        const ok: string[] = [];
        const failed: Array<Record<string, unknown>> = missing_ids.map((id) => ({
          property_id: id,
          failed_side: 'publisher',
          reason: "property not found in the publisher's adagents.json",
        }));
        for (const p of found) {
          const verdict = await checkAgentAuthorization(c.db, agentUrl, [p], { now });
          if (verdict.authorized) ok.push(p.property_id ?? p.property_rid);
          else
            failed.push({
              property_id: p.property_id ?? p.property_rid,
              failed_side: verdict.failed_side,
              reason: (verdict.failed_side === 'operator' ? verdict.operator_check.reason : verdict.publisher_check.reason) ?? null,
            });
        }
        const total = found.length + missing_ids.length;
        requested += total;
        authorized += ok.length;
        selectors.push({
          ...s,
          total_requested: total,
          total_authorized: ok.length,
          authorized: total > 0 && ok.length === total,
          authorized_property_ids: ok,
          unauthorized: failed,
        });
      }
      return {
        agent_url: agentUrl,
        authorized: requested > 0 && authorized === requested,
        coverage_percentage: requested ? Math.round((authorized / requested) * 10000) / 100 : 0,
        total_requested: requested,
        total_authorized: authorized,
        selectors,
        checked_at: now.toISOString(),
      };
    },
  });

  const expand = defineEndpoint({
    method: 'POST',
    path: '/api/registry/expand/product-identifiers',
    tool: 'expand_product_identifiers',
    success: { schema: expandOut },
    summary: 'Expand publisher_properties selectors into the identifiers the agent is authorized for',
    tags: ['Lookups'],
    body: productBody,
    errors: [400],
    async handler({ body }) {
      const agentUrl = agentUrlOrThrow(body.agent_url);
      const now = c.clock.now();
      const properties: CandidateProperty[] = [];
      for (const raw of body.publisher_properties) {
        const s: Selector = { ...raw, publisher_domain: domainOrThrow(raw.publisher_domain, 'publisher_domain') };
        properties.push(...(await propertiesForSelector(c.db, s)).found);
      }
      const unique = [...new Map(properties.map((p) => [p.property_rid, p])).values()];
      const granted = unique.length
        ? new Set(
            (
              await c.db.query<{ id: string }>(sql`
            SELECT z.property_id::text AS id FROM registry_authorizations z JOIN registry_agents a ON a.id = z.agent_id
            WHERE a.url = ${agentUrl}::text AND z.property_id = ANY(${unique.map((p) => p.property_rid)}::uuid[])
              AND (z.effective_from IS NULL OR z.effective_from <= ${now}::timestamptz) AND (z.effective_until IS NULL OR z.effective_until > ${now}::timestamptz)`)
            ).map((r) => r.id),
          )
        : new Set<string>();
      const kept = unique.filter((p) => granted.has(p.property_rid));
      const identifiers = kept.flatMap((p) =>
        p.identifiers.map((i) => ({ type: i.type, value: i.value, property_id: p.property_id ?? p.property_rid, publisher_domain: p.publisher_domain })),
      );
      return {
        agent_url: agentUrl,
        properties: kept.map((p) => ({ ...propertyView(p), publisher_domain: p.publisher_domain, identifiers: p.identifiers })),
        identifiers,
        property_count: kept.length,
        identifier_count: identifiers.length,
        generated_at: now.toISOString(),
      };
    },
  });

  return [byDomain, byProperty, agentDomains, propertyAuthorization, productAuthorization, expand];
}
