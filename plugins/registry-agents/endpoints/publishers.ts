import * as v from 'valibot';
import { defineEndpoint, qInt } from '../../../core/endpoint.ts';
import { notFound } from '../../../core/errors.ts';
import { sql } from '../../../core/sql.ts';
import { domainOrThrow } from '../urls.ts';
import { visibleAgents, type DiscoveryContext } from '../context.ts';
import { collectionsOut, operatorOut, publisherOut, publishersOut, statsOut } from '../responses.ts';

const domainQuery = v.object({ domain: v.pipe(v.string('is required'), v.maxLength(300)) });

export function publisherEndpoints(c: DiscoveryContext) {
  const publishers = defineEndpoint({
    method: 'GET',
    path: '/api/registry/publishers',
    tool: 'list_publishers',
    success: { schema: publishersOut },
    summary: 'List publishers',
    tags: ['Agent discovery'],
    query: v.object({
      search: v.optional(v.pipe(v.string(), v.maxLength(100))),
      limit: qInt(1, 1000, 100),
      offset: qInt(0, 1_000_000, 0),
    }),
    async handler({ query }) {
      const where = query.search ? sql`WHERE strpos(pub.domain, lower(${query.search}::text)) > 0` : sql.empty;
      const rows = await c.db.query<{
        domain: string;
        agent_count: number;
        property_count: number;
        last_validated: Date | null;
        has_valid_adagents: boolean;
      }>(sql`
        SELECT pub.domain, pub.adagents_valid AS has_valid_adagents, pub.last_validated,
          (SELECT count(*)::int FROM registry_publisher_agents pa WHERE pa.publisher_id = pub.id) AS agent_count,
          (SELECT count(*)::int FROM registry_properties p WHERE p.publisher_id = pub.id AND p.status = 'active') AS property_count
        FROM registry_publishers pub ${where}
        ORDER BY pub.domain LIMIT ${query.limit!}::int OFFSET ${query.offset!}::int`);
      const [total] = await c.db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM registry_publishers pub ${where}`);
      return {
        publishers: rows.map((r) => ({ ...r, last_validated: r.last_validated ? new Date(r.last_validated).toISOString() : null })),
        count: total!.n,
      };
    },
  });

  const stats = defineEndpoint({
    method: 'GET',
    path: '/api/registry/stats',
    tool: 'registry_stats',
    success: { schema: statsOut },
    summary: 'Registry statistics',
    tags: ['Agent discovery'],
    async handler() {
      const [r] = await c.db.query<Record<string, number>>(sql`
        SELECT
          (SELECT count(*)::int FROM registry_agents WHERE owner_org_id IS NOT NULL) AS registered_agents,
          (SELECT count(*)::int FROM registry_agents WHERE owner_org_id IS NULL) AS discovered_agents,
          (SELECT count(*)::int FROM registry_publishers) AS publishers,
          (SELECT count(*)::int FROM registry_publishers WHERE adagents_valid) AS publishers_with_valid_adagents,
          (SELECT count(*)::int FROM registry_properties WHERE status = 'active') AS active_properties,
          (SELECT count(*)::int FROM registry_properties WHERE status = 'stale') AS stale_properties,
          (SELECT count(*)::int FROM registry_authorizations) AS authorizations,
          (SELECT count(*)::int FROM registry_operators WHERE brand_json_valid) AS operators`);
      return {
        agents: { registered: r!.registered_agents, discovered: r!.discovered_agents, total: r!.registered_agents! + r!.discovered_agents! },
        publishers: { total: r!.publishers, with_valid_adagents: r!.publishers_with_valid_adagents },
        properties: { active: r!.active_properties, stale: r!.stale_properties, total: r!.active_properties! + r!.stale_properties! },
        authorizations: r!.authorizations,
        operators: r!.operators,
      };
    },
  });

  const operator = defineEndpoint({
    method: 'GET',
    path: '/api/registry/operator',
    tool: 'lookup_operator',
    success: { schema: operatorOut },
    summary: 'Agents operated by an entity, and the publishers trusting them',
    description: 'Anonymous: public agents; API-tier members: + members_only; the owning organization: + private.',
    tags: ['Agent discovery'],
    auth: 'optional',
    query: domainQuery,
    errors: [400],
    async handler({ query, principal }) {
      const domain = domainOrThrow(query.domain);
      const agents = await c.db.query<{
        id: string;
        url: string;
        name: string | null;
        type: string | null;
        visibility: string;
        owner_org_name: string | null;
      }>(sql`
        SELECT a.id::text, a.url, a.name, a.type, a.visibility, a.owner_org_name
        FROM registry_agents a
        WHERE (a.operator_domain = ${domain}::text OR a.url IN (SELECT agent_url FROM registry_operator_agents WHERE operator_domain = ${domain}::text))
          AND ${visibleAgents(principal)}
        ORDER BY a.url`);
      const trust = agents.length
        ? await c.db.query<{ agent_id: string; publisher_domain: string; authorized_for: string | null; delegation_types: string[] }>(sql`
            SELECT pa.agent_id::text, pub.domain AS publisher_domain, pa.authorized_for, pa.delegation_types
            FROM registry_publisher_agents pa JOIN registry_publishers pub ON pub.id = pa.publisher_id AND pub.adagents_valid
            WHERE pa.agent_id = ANY(${agents.map((a) => a.id)}::uuid[]) ORDER BY pub.domain`)
        : [];
      const owner = agents.find((a) => a.owner_org_name)?.owner_org_name ?? null;
      return {
        domain,
        member: owner ? { name: owner } : null,
        agents: agents.map((a) => ({
          url: a.url,
          name: a.name,
          type: a.type,
          visibility: a.visibility,
          authorized_by: trust
            .filter((t) => t.agent_id === a.id)
            .map((t) => ({
              publisher_domain: t.publisher_domain,
              authorized_for: t.authorized_for,
              delegation_types: t.delegation_types,
              source: 'adagents_json',
            })),
        })),
        publishers: [...new Set(trust.map((t) => t.publisher_domain))].sort(),
      };
    },
  });

  const publisher = defineEndpoint({
    method: 'GET',
    path: '/api/registry/publisher',
    tool: 'lookup_publisher',
    success: { schema: publisherOut },
    summary: 'A publisher: its properties and the agents its adagents.json authorizes',
    tags: ['Agent discovery'],
    query: domainQuery,
    errors: [400, 404],
    async handler({ query }) {
      const domain = domainOrThrow(query.domain);
      const [pub] = await c.db.query<{
        id: string;
        source: string;
        has_adagents: boolean;
        adagents_valid: boolean;
        last_validated: Date | null;
        contact: unknown;
        validation_errors: unknown[];
      }>(sql`
        SELECT id::text, source, has_adagents, adagents_valid, last_validated, contact, validation_errors FROM registry_publishers WHERE domain = ${domain}::text`);
      if (!pub) throw notFound(`publisher ${domain} is not in the registry`);
      const properties = await c.db.query(sql`
        SELECT id::text AS property_rid, property_id AS id, property_type AS type, name, identifiers, tags, status
        FROM registry_properties WHERE publisher_id = ${pub.id}::uuid ORDER BY property_key`);
      const agents = pub.adagents_valid
        ? await c.db.query(sql`
            SELECT a.url, pa.authorized_for, pa.authorization_types, pa.delegation_types,
              (SELECT count(*)::int FROM registry_authorizations z JOIN registry_properties p ON p.id = z.property_id AND p.status = 'active'
               WHERE z.agent_id = pa.agent_id AND z.publisher_id = pa.publisher_id) AS property_count
            FROM registry_publisher_agents pa JOIN registry_agents a ON a.id = pa.agent_id
            WHERE pa.publisher_id = ${pub.id}::uuid ORDER BY a.url`)
        : [];
      return {
        domain,
        source: pub.source,
        has_adagents: pub.has_adagents,
        adagents_valid: pub.adagents_valid,
        last_validated: pub.last_validated ? new Date(pub.last_validated).toISOString() : null,
        contact: pub.contact,
        validation_errors: pub.validation_errors,
        properties,
        authorized_agents: agents,
      };
    },
  });

  const collections = defineEndpoint({
    method: 'GET',
    path: '/api/registry/collections',
    tool: 'list_collections',
    success: { schema: collectionsOut },
    summary: 'Publisher collections (shows, series, podcasts) from adagents.json, with their distribution identifiers',
    description: 'Merged records point at the collection they were found to be (merged_into); removed ones are no longer in their publisher file.',
    tags: ['Agent discovery'],
    query: v.object({
      publisher_domain: v.optional(v.pipe(v.string(), v.maxLength(300))),
      status: v.optional(v.picklist(['active', 'removed', 'merged'], 'must be active, removed or merged')),
      limit: qInt(1, 1000, 100),
      offset: qInt(0, 1_000_000, 0),
    }),
    errors: [400],
    async handler({ query }) {
      const domain = query.publisher_domain === undefined ? null : domainOrThrow(query.publisher_domain, 'publisher_domain');
      const where = sql`(${domain}::text IS NULL OR pub.domain = ${domain}::text) AND (${query.status ?? null}::text IS NULL OR c.status = ${query.status ?? null}::text)`;
      const rows = await c.db.query<Record<string, any>>(sql`
        SELECT c.id::text AS collection_rid, c.collection_id, pub.domain AS publisher_domain, c.name, c.kind, c.status, c.merged_into::text AS merged_into,
          coalesce(c.data->'distribution', '[]'::jsonb) AS distribution, c.updated_at
        FROM registry_collections c JOIN registry_publishers pub ON pub.id = c.publisher_id
        WHERE ${where} ORDER BY pub.domain, c.collection_id LIMIT ${query.limit}::int OFFSET ${query.offset}::int`);
      const [total] = await c.db.query<{ n: number }>(sql`
        SELECT count(*)::int AS n FROM registry_collections c JOIN registry_publishers pub ON pub.id = c.publisher_id WHERE ${where}`);
      return {
        collections: rows.map((r) => ({ ...r, updated_at: new Date(r.updated_at).toISOString() })),
        total: total!.n,
        limit: query.limit,
        offset: query.offset,
      };
    },
  });

  return [publishers, stats, operator, publisher, collections];
}
