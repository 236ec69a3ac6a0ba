import { sql, type SqlFragment } from '../../../core/sql.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import type { AgentProfileDocument, Visibility } from '../../../core/ports/search.ts';
import { enqueueSearch } from './search-outbox.ts';

/** Inventory an enrolling organization declares; merged with what authorizations imply. */
export interface DeclaredInventory {
  channels?: string[];
  property_types?: string[];
  markets?: string[];
  categories?: string[];
  tags?: string[];
  delivery_types?: string[];
  format_ids?: unknown[];
  has_tmp?: boolean;
  category_taxonomy?: string | null;
}

export interface ProfileChanges {
  /** Profiles created or changed (documents to upsert into the search index). */
  changed: Array<AgentProfileDocument & { agent_id: string }>;
  /** Agents whose profile was deleted (no enrollment, no authorization left). */
  removed: Array<{ agent_id: string; agent_url: string }>;
}

const uniqSorted = (xs: Iterable<string>) => [...new Set(xs)].filter(Boolean).sort();

interface AgentRow {
  id: string;
  url: string;
  visibility: Visibility;
  owner_org_id: string | null;
  declared_inventory: DeclaredInventory;
}

/**
 * Recompute the inventory profiles of the given agents from their active authorizations plus
 * what their owners declared; write only those that changed, and queue them for the search index
 * in the same transaction. Returns the changes so callers can emit `agent.profile_updated`.
 */
export async function refreshProfiles(tx: Queryable, agentIds: readonly string[], now: Date): Promise<ProfileChanges> {
  const out: ProfileChanges = { changed: [], removed: [] };
  const ids = [...new Set(agentIds)];
  if (ids.length === 0) return out;
  const agents = await tx.query<AgentRow>(sql`
    SELECT id::text, url, visibility, owner_org_id::text, declared_inventory FROM registry_agents WHERE id = ANY(${ids}::uuid[])`);
  const derived = await tx.query<{
    agent_id: string;
    publisher_id: string;
    property_id: string;
    property_type: string;
    channels: string[];
    tags: string[];
    countries: string[];
  }>(sql`
    SELECT z.agent_id::text, z.publisher_id::text, p.id::text AS property_id, p.property_type, p.channels, p.tags, z.countries
    FROM registry_authorizations z JOIN registry_properties p ON p.id = z.property_id AND p.status = 'active'
    WHERE z.agent_id = ANY(${ids}::uuid[])`);
  const linked = await tx.query<{ agent_id: string; publisher_id: string }>(sql`
    SELECT pa.agent_id::text, pa.publisher_id::text FROM registry_publisher_agents pa
    JOIN registry_publishers p ON p.id = pa.publisher_id AND p.adagents_valid
    WHERE pa.agent_id = ANY(${ids}::uuid[])`);
  const existing = await tx.query<ProfileRow>(sql`
    SELECT agent_id::text, channels, property_types, markets, categories, tags, delivery_types, format_ids,
           property_count, publisher_count, has_tmp, category_taxonomy, updated_at
    FROM registry_agent_profiles WHERE agent_id = ANY(${ids}::uuid[])`);
  const before = new Map(existing.map((r) => [r.agent_id, r]));

  for (const agent of agents) {
    const rows = derived.filter((r) => r.agent_id === agent.id);
    const publishers = new Set([...rows.map((r) => r.publisher_id), ...linked.filter((l) => l.agent_id === agent.id).map((l) => l.publisher_id)]);
    const d = agent.declared_inventory ?? {};
    if (!agent.owner_org_id && rows.length === 0 && publishers.size === 0) {
      if (before.has(agent.id)) {
        await tx.query(sql`DELETE FROM registry_agent_profiles WHERE agent_id = ${agent.id}::uuid`);
        out.removed.push({ agent_id: agent.id, agent_url: agent.url });
      }
      continue;
    }
    const next: ProfileRow = {
      agent_id: agent.id,
      channels: uniqSorted([...(d.channels ?? []), ...rows.flatMap((r) => r.channels)]),
      property_types: uniqSorted([...(d.property_types ?? []), ...rows.map((r) => r.property_type)]),
      markets: uniqSorted([...(d.markets ?? []), ...rows.flatMap((r) => r.countries)]),
      categories: uniqSorted(d.categories ?? []),
      tags: uniqSorted([...(d.tags ?? []), ...rows.flatMap((r) => r.tags)]),
      delivery_types: uniqSorted(d.delivery_types ?? []),
      format_ids: d.format_ids ?? [],
      property_count: new Set(rows.map((r) => r.property_id)).size,
      publisher_count: publishers.size,
      has_tmp: d.has_tmp ?? false,
      category_taxonomy: d.category_taxonomy ?? null,
      updated_at: now,
    };
    const prior = before.get(agent.id);
    if (prior && sameProfile(prior, next)) continue;
    await tx.query(sql`
      INSERT INTO registry_agent_profiles (agent_id, channels, property_types, markets, categories, tags, delivery_types,
        format_ids, property_count, publisher_count, has_tmp, category_taxonomy, updated_at)
      VALUES (${agent.id}::uuid, ${next.channels}::text[], ${next.property_types}::text[], ${next.markets}::text[],
        ${next.categories}::text[], ${next.tags}::text[], ${next.delivery_types}::text[], ${next.format_ids}::jsonb,
        ${next.property_count}::int, ${next.publisher_count}::int, ${next.has_tmp}::boolean, ${next.category_taxonomy}::text, ${now}::timestamptz)
      ON CONFLICT (agent_id) DO UPDATE SET channels = EXCLUDED.channels, property_types = EXCLUDED.property_types,
        markets = EXCLUDED.markets, categories = EXCLUDED.categories, tags = EXCLUDED.tags, delivery_types = EXCLUDED.delivery_types,
        format_ids = EXCLUDED.format_ids, property_count = EXCLUDED.property_count, publisher_count = EXCLUDED.publisher_count,
        has_tmp = EXCLUDED.has_tmp, category_taxonomy = EXCLUDED.category_taxonomy, updated_at = EXCLUDED.updated_at`);
    out.changed.push(toDocument(agent, next));
  }
  await enqueueSearch(
    tx,
    [...out.changed, ...out.removed].map((c) => c.agent_url),
    now,
  );
  return out;
}

/** A stored profile row: the search document's inventory fields, keyed by agent id. */
type ProfileRow = Omit<AgentProfileDocument, 'agent_url' | 'updated_at' | 'visibility' | 'owner_org_id'> & {
  agent_id: string;
  updated_at: Date | string;
};

function sameProfile(a: ProfileRow, b: ProfileRow): boolean {
  const { updated_at: _a, agent_id: _x, ...ra } = a;
  const { updated_at: _b, agent_id: _y, ...rb } = b;
  return JSON.stringify(ra, Object.keys(ra).sort()) === JSON.stringify(rb, Object.keys(rb).sort());
}

function toDocument(agent: Pick<AgentRow, 'url' | 'visibility' | 'owner_org_id'> & { id: string }, p: ProfileRow): AgentProfileDocument & { agent_id: string } {
  return {
    agent_id: agent.id,
    agent_url: agent.url,
    channels: p.channels,
    property_types: p.property_types,
    markets: p.markets,
    categories: p.categories,
    tags: p.tags,
    delivery_types: p.delivery_types,
    format_ids: p.format_ids,
    property_count: p.property_count,
    publisher_count: p.publisher_count,
    has_tmp: p.has_tmp,
    category_taxonomy: p.category_taxonomy,
    updated_at: new Date(p.updated_at).toISOString(),
    visibility: agent.visibility,
    owner_org_id: agent.owner_org_id,
  };
}

/** Current search documents of the given agents (all agents when `agentIds` is omitted). */
export function profileDocuments(q: Queryable, agentIds?: readonly string[]): Promise<Array<AgentProfileDocument & { agent_id: string }>> {
  return documentsWhere(q, agentIds ? sql`WHERE p.agent_id = ANY(${[...agentIds]}::uuid[])` : sql.empty);
}

/** Current search documents of the given agent URLs; a URL without a profile has none. */
export function profileDocumentsByUrl(q: Queryable, agentUrls: readonly string[]): Promise<Array<AgentProfileDocument & { agent_id: string }>> {
  return documentsWhere(q, sql`WHERE a.url = ANY(${[...agentUrls]}::text[])`);
}

async function documentsWhere(q: Queryable, where: SqlFragment): Promise<Array<AgentProfileDocument & { agent_id: string }>> {
  const rows = await q.query<ProfileRow & { url: string; visibility: Visibility; owner_org_id: string | null }>(sql`
    SELECT p.agent_id::text, a.url, a.visibility, a.owner_org_id::text, p.channels, p.property_types, p.markets, p.categories,
           p.tags, p.delivery_types, p.format_ids, p.property_count, p.publisher_count, p.has_tmp, p.category_taxonomy, p.updated_at
    FROM registry_agent_profiles p JOIN registry_agents a ON a.id = p.agent_id
    ${where}`);
  return rows.map((r) => toDocument({ id: r.agent_id, url: r.url, visibility: r.visibility, owner_org_id: r.owner_org_id }, r));
}
