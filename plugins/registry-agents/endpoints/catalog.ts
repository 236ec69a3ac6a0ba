import * as v from 'valibot';
import { anyObject, defineEndpoint, qBool, qInt, qRepeat, Reply } from '../../../core/endpoint.ts';
import { invalid, notFound } from '../../../core/errors.ts';
import { sql } from '../../../core/sql.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import type { NewEvent } from '../../../core/ports/events.ts';
import { tierAtLeast } from '../../../core/ports/auth.ts';
import { AGENT_TYPES, enrollAgent, removeAgent } from '../store/agents.ts';
import { agentUrlOrThrow, normalizeDomain } from '../urls.ts';
import { visibleAgents, type DiscoveryContext } from '../context.ts';
import { healthBlocks, healthStates } from '../health/state.ts';
import { agentChecksOut, catalogOut, enrollOut, removeOut } from '../responses.ts';

const token = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const stringList = (max = 200) => v.optional(v.pipe(v.array(token), v.maxLength(max)));

/** Keyset position in the catalog order (name, url), opaque to clients. */
const cursorSchema = v.pipe(
  v.string(),
  v.maxLength(4000),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    try {
      const pos = JSON.parse(Buffer.from(dataset.value, 'base64url').toString('utf8')) as unknown;
      if (Array.isArray(pos) && pos.length === 2 && pos.every((x) => typeof x === 'string')) return pos as [string, string];
    } catch {
      // reported below
    }
    addIssue({ message: 'must be a cursor from a previous page' });
    return NEVER;
  }),
);
const encodeCursor = (name: string, url: string) => Buffer.from(JSON.stringify([name, url])).toString('base64url');

export const CATALOG_PAGE = { default: 100, max: 500 };

const catalogQuery = v.object({
  limit: qInt(1, CATALOG_PAGE.max, CATALOG_PAGE.default),
  cursor: v.optional(cursorSchema),
  type: v.optional(v.picklist(AGENT_TYPES, `must be one of ${AGENT_TYPES.join(', ')}`)),
  capabilities: qBool(),
  health: qBool(),
  compliance: qBool(),
  verification: qBool(),
  metric_id: qRepeat(v.pipe(v.string(), v.minLength(1), v.maxLength(200)), 100),
  accreditation: qRepeat(v.pipe(v.string(), v.minLength(1), v.maxLength(200)), 100),
  q: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(64, 'must be at most 64 characters'),
      v.check((s) => !/[%_]/.test(s), 'must not contain the SQL wildcard characters % or _'),
    ),
  ),
});

interface CatalogRow {
  id: string;
  url: string;
  name: string;
  type: string;
  protocol: string;
  description: string | null;
  contact: unknown;
  visibility: string;
  owner_org_name: string | null;
  operator_domain: string | null;
  publisher_domains: string[];
  property_count: number | null;
  publisher_count: number | null;
  channels: string[] | null;
  property_types: string[] | null;
  creative_capabilities: unknown;
  signals_capabilities: unknown;
  metrics: Array<Record<string, any>> | null;
  crawled_at: Date | string | null;
}

/** Catalog rows (enrolled agents) visible to the caller, optionally restricted, in (name, url) order, optionally one page after a position. */
export async function catalogRows(
  q: Queryable,
  where: ReturnType<typeof sql>,
  principal: Parameters<typeof visibleAgents>[0],
  page?: { limit: number; after?: [string, string] },
): Promise<CatalogRow[]> {
  const after = page?.after ? sql`AND (coalesce(a.name, ''), a.url) > (${page.after[0]}::text, ${page.after[1]}::text)` : sql.empty;
  const limit = page ? sql`LIMIT ${page.limit}::int` : sql.empty;
  return q.query<CatalogRow>(sql`
    SELECT a.id::text, a.url, a.name, a.type, a.protocol, a.description, a.contact, a.visibility, a.owner_org_name, a.operator_domain,
      array(SELECT pub.domain FROM registry_publisher_agents pa JOIN registry_publishers pub ON pub.id = pa.publisher_id AND pub.adagents_valid
            WHERE pa.agent_id = a.id ORDER BY pub.domain) AS publisher_domains,
      p.property_count, p.publisher_count, p.channels, p.property_types,
      c.creative_capabilities, c.signals_capabilities, c.metrics, c.crawled_at
    FROM registry_agents a
    LEFT JOIN registry_agent_profiles p ON p.agent_id = a.id
    LEFT JOIN registry_agent_capabilities c ON c.agent_id = a.id
    WHERE a.owner_org_id IS NOT NULL AND ${visibleAgents(principal)} AND ${where} ${after}
    ORDER BY coalesce(a.name, ''), a.url ${limit}`);
}

export function catalogEntry(r: CatalogRow, withCapabilities: boolean): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    name: r.name,
    url: r.url,
    type: r.type,
    protocol: r.protocol,
    description: r.description,
    contact: r.contact,
    member: r.owner_org_name ? { name: r.owner_org_name } : null,
    visibility: r.visibility,
    operator_domain: r.operator_domain,
    publisher_domains: r.publisher_domains,
    property_summary: {
      property_count: r.property_count ?? 0,
      publisher_count: r.publisher_count ?? 0,
      channels: r.channels ?? [],
      property_types: r.property_types ?? [],
    },
  };
  if (withCapabilities) {
    entry.capabilities = {
      creative_capabilities: r.creative_capabilities ?? null,
      signals_capabilities: r.signals_capabilities ?? null,
      measurement: {
        // Accreditations are vendor claims: never verified by the registry.
        metrics: (r.metrics ?? []).map((m) => ({
          ...m,
          accreditations: (Array.isArray(m.accreditations) ? m.accreditations : []).map((a: Record<string, unknown>) => ({ ...a, verified_by_aao: false })),
        })),
      },
      crawled_at: r.crawled_at ? new Date(r.crawled_at).toISOString() : null,
    };
  }
  return entry;
}

const capabilityBlock = anyObject();

const enrollBody = v.object({
  url: v.pipe(v.string(), v.maxLength(2048)),
  name: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
  type: v.picklist(AGENT_TYPES, `must be one of ${AGENT_TYPES.join(', ')}`),
  protocol: v.optional(v.picklist(['mcp', 'a2a']), 'mcp'),
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000)))),
  contact: v.optional(
    v.nullable(
      v.object({
        name: v.optional(v.pipe(v.string(), v.maxLength(255))),
        email: v.optional(v.pipe(v.string(), v.email(), v.maxLength(255))),
        url: v.optional(v.pipe(v.string(), v.url())),
      }),
    ),
  ),
  visibility: v.optional(v.picklist(['public', 'members_only', 'private']), 'public'),
  operator_domain: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(253)))),
  inventory: v.optional(
    v.object({
      channels: stringList(),
      property_types: stringList(),
      markets: stringList(),
      categories: stringList(),
      tags: stringList(),
      delivery_types: stringList(),
      format_ids: v.optional(v.pipe(v.array(v.unknown()), v.maxLength(500))),
      has_tmp: v.optional(v.boolean()),
      category_taxonomy: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(100)))),
    }),
  ),
  capabilities: v.optional(
    v.object({
      // Capability blocks are JSON objects (as get_{ns}_capabilities answers them), stored as jsonb.
      creative_capabilities: v.optional(v.nullable(capabilityBlock)),
      signals_capabilities: v.optional(v.nullable(capabilityBlock)),
      metrics: v.optional(
        v.pipe(
          v.array(
            v.looseObject({
              metric_id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
              accreditations: v.optional(v.array(v.looseObject({ accrediting_body: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) }))),
            }),
          ),
          v.maxLength(500),
        ),
      ),
    }),
  ),
});

export function catalogEndpoints(c: DiscoveryContext) {
  const list = defineEndpoint({
    method: 'GET',
    path: '/api/registry/agents',
    tool: 'list_agents',
    success: { schema: catalogOut },
    summary: 'Member-enrolled agent catalog',
    description:
      'Anonymous callers see public agents; API-tier members also members_only; the owning organization also its private agents. metric_id / accreditation / q imply type=measurement. ' +
      'Pages of `limit` agents (default 100, at most 500) in name order; pass `cursor` from the previous page while `has_more` is true. ' +
      'Answers carry an ETag; send it back in If-None-Match to get 304 when nothing changed. ' +
      'health=true, compliance=true and verification=true add the probe results and the verification badge (rules in the README).',
    tags: ['Agent discovery'],
    auth: 'optional',
    etag: true,
    query: catalogQuery,
    errors: [400],
    async handler({ query, principal }) {
      const measurement = (query.metric_id?.length ?? 0) > 0 || (query.accreditation?.length ?? 0) > 0 || query.q !== undefined;
      if (measurement && query.type && query.type !== 'measurement') {
        throw invalid(`query.type: metric_id, accreditation and q imply type=measurement; type=${query.type} contradicts them`, 'type');
      }
      const type = measurement ? 'measurement' : query.type;
      const where = [sql`TRUE`];
      if (type) where.push(sql`a.type = ${type}::text`);
      if (query.metric_id?.length) where.push(sql`c.metric_ids && ${query.metric_id}::text[]`);
      if (query.accreditation?.length) where.push(sql`c.accrediting_bodies && ${query.accreditation}::text[]`);
      // Plain substring (strpos), so no pattern characters are ever interpreted.
      if (query.q !== undefined) where.push(sql`EXISTS (SELECT 1 FROM unnest(c.metric_ids) m WHERE strpos(lower(m), lower(${query.q}::text)) > 0)`);
      const rows = await catalogRows(c.db, sql.join(where, ' AND '), principal, { limit: query.limit + 1, after: query.cursor });
      const has_more = rows.length > query.limit;
      const page = rows.slice(0, query.limit);
      const agents = page.map((r) => catalogEntry(r, query.capabilities === true));
      if (query.health || query.compliance || query.verification) {
        const states = await healthStates(
          c.db,
          page.map((r) => r.id),
          c.clock.now(),
        );
        const want = { health: query.health, compliance: query.compliance, verification: query.verification };
        for (const [i, r] of page.entries()) Object.assign(agents[i]!, healthBlocks(states.get(r.id), want));
      }
      const last = page[page.length - 1];
      return { agents, count: agents.length, has_more, cursor: has_more && last ? encodeCursor(last.name ?? '', last.url) : null };
    },
  });

  const enroll = defineEndpoint({
    method: 'POST',
    path: '/api/registry/agents',
    tool: 'enroll_agent',
    success: { status: 201, description: 'Enrolled (201) or updated (200)', schema: enrollOut },
    summary: "Enroll or update an agent of the caller's organization",
    tags: ['Agent discovery'],
    auth: 'required',
    tier: 'member',
    body: enrollBody,
    errors: [400, 401, 403, 409],
    async handler({ body, principal }) {
      const url = agentUrlOrThrow(body.url, 'url');
      const operatorDomain = body.operator_domain ? normalizeDomain(body.operator_domain) : null;
      if (body.operator_domain && !operatorDomain) throw invalid('body.operator_domain: must be a valid domain name', 'operator_domain');
      const now = c.clock.now();
      const result = await c.db.transaction(async (tx) => {
        const r = await enrollAgent(
          tx,
          { orgId: principal!.orgId, orgName: principal!.orgName },
          { ...body, url, operator_domain: operatorDomain },
          { now, newId: c.ids.uuid7 },
        );
        // The feed shows the event to whoever the catalog shows the agent to.
        await appendEvents(c, tx, [
          {
            event_type: 'agent.profile_updated',
            entity_type: 'agent',
            entity_id: r.agent_id,
            payload: {
              agent_url: url,
              change: r.created ? 'enrolled' : 'updated',
              profile: r.profiles.changed[0] ? stripIds(r.profiles.changed[0]) : null,
            },
            actor: `org:${principal!.orgId}`,
            visibility: body.visibility,
            owner_org_id: principal!.orgId,
          },
        ]);
        return r;
      });
      c.searchChanged();
      const [row] = await catalogRows(c.db, sql`a.id = ${result.agent_id}::uuid`, principal);
      return new Reply(result.created ? 201 : 200, { created: result.created, agent: catalogEntry(row!, true) });
    },
  });

  const remove = defineEndpoint({
    method: 'DELETE',
    path: '/api/registry/agents',
    tool: 'remove_agent',
    success: { schema: removeOut },
    summary: 'Remove an enrolled agent from the catalog',
    tags: ['Agent discovery'],
    auth: 'required',
    tier: 'member',
    query: v.object({ url: v.pipe(v.string(), v.maxLength(2048)) }),
    errors: [400, 401, 403, 404],
    async handler({ query, principal }) {
      const url = agentUrlOrThrow(query.url, 'url');
      const now = c.clock.now();
      await c.db.transaction(async (tx) => {
        const r = await removeAgent(tx, { orgId: principal!.orgId, admin: tierAtLeast(principal!.tier, 'admin') }, url, now);
        if (!r) throw notFound(`agent ${url} is not enrolled`);
        await appendEvents(c, tx, [
          {
            event_type: 'agent.removed',
            entity_type: 'agent',
            entity_id: r.agent_id,
            payload: { agent_url: url },
            actor: `org:${principal!.orgId}`,
            visibility: r.visibility,
            owner_org_id: r.owner_org_id,
          },
        ]);
      });
      c.searchChanged();
      return { removed: true, agent_url: url };
    },
  });

  const checks = defineEndpoint({
    method: 'GET',
    path: '/api/registry/agents/checks',
    tool: 'agent_health_checks',
    success: { schema: agentChecksOut },
    summary: "An agent's probe history (reachability, latency, capabilities answer and its conformance), newest first",
    tags: ['Agent discovery'],
    auth: 'optional',
    query: v.object({ url: v.pipe(v.string(), v.maxLength(2048)), limit: qInt(1, 200, 20) }),
    errors: [400, 404],
    async handler({ query, principal }) {
      const url = agentUrlOrThrow(query.url, 'url');
      const [agent] = await c.db.query<{ id: string }>(sql`
        SELECT a.id::text FROM registry_agents a WHERE a.url = ${url}::text AND a.owner_org_id IS NOT NULL AND ${visibleAgents(principal)}`);
      if (!agent) throw notFound(`agent ${url} is not in the catalog`);
      const rows = await c.db.query<Record<string, any>>(sql`
        SELECT checked_at, protocol, reachable, capabilities_answered, schema_conformant, latency_ms, issues, error
        FROM registry_agent_health_checks WHERE agent_id = ${agent.id}::uuid ORDER BY checked_at DESC LIMIT ${query.limit}::int`);
      return { agent_url: url, checks: rows.map((r) => ({ ...r, checked_at: new Date(r.checked_at).toISOString() })) };
    },
  });

  return [list, enroll, remove, checks];
}

function stripIds<T extends { agent_id: string; owner_org_id: string | null }>(doc: T) {
  const { agent_id: _a, owner_org_id: _o, ...rest } = doc;
  return rest;
}

async function appendEvents(c: DiscoveryContext, tx: Queryable, events: NewEvent[]): Promise<void> {
  const log = c.events;
  if (log && events.length) await log.append(tx, events);
}
