/**
 * Pure translation between the search port and Meilisearch: documents, index settings, filter
 * expressions and search parameters. No I/O here, so all of it is unit-tested without a server.
 */
import {
  SEARCH_DIMENSIONS,
  activeDimensions,
  baseScore,
  relevanceScore,
  type AgentProfileDocument,
  type AgentSearchHit,
  type AgentSearchQuery,
} from '../../core/ports/search.ts';
import type { SearchCursor } from '../../lib/search-cursor.ts';

/** Stored shape: the port document plus the id and the precomputed base score. */
export interface MeiliAgentDocument extends Omit<AgentProfileDocument, 'owner_org_id'> {
  id: string;
  /** '' for none: Meilisearch cannot filter on null equality portably. */
  owner_org_id: string;
  base_score: number;
}

/** Meilisearch ids allow [A-Za-z0-9_-] only; a URL hash is stable and fits. */
export function documentId(agentUrl: string): string {
  return new Bun.CryptoHasher('sha256').update(agentUrl).digest('hex');
}

export function toMeiliDocument(doc: AgentProfileDocument): MeiliAgentDocument {
  return { ...doc, id: documentId(doc.agent_url), owner_org_id: doc.owner_org_id ?? '', base_score: baseScore(doc) };
}

export const INDEX_SETTINGS = {
  filterableAttributes: [...SEARCH_DIMENSIONS, 'has_tmp', 'property_count', 'visibility', 'owner_org_id', 'base_score'],
  sortableAttributes: ['base_score', 'agent_url'],
  // No text relevance: the order is exactly the sort (base_score desc, agent_url asc).
  rankingRules: ['sort'],
  // Deep pages of a tie group use offsets; allow them.
  pagination: { maxTotalHits: 1_000_000 },
} as const;

/** A double-quoted Meilisearch filter string literal. */
export function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Meilisearch prints and parses f64 exactly when given the shortest round-trip decimal. */
function num(n: number): string {
  if (!Number.isFinite(n)) throw new Error('non-finite number in filter');
  return String(n);
}

/**
 * Filter expressions, ANDed (Meilisearch's array form): `attr IN [...]` on an array attribute
 * matches when any element is in the list, which is the "OR within a dimension" rule.
 */
export function buildFilter(query: AgentSearchQuery, cursor: SearchCursor | null): string[] {
  const out: string[] = [];
  for (const d of activeDimensions(query.filters)) out.push(`${d} IN [${query.filters[d]!.map(quote).join(', ')}]`);
  if (query.has_tmp === true) out.push('has_tmp = true');
  if (query.min_properties !== undefined) out.push(`property_count >= ${Math.trunc(query.min_properties)}`);
  const vis = ['visibility = "public"'];
  if (query.viewer.member) vis.push('visibility = "members_only"');
  if (query.viewer.orgId) vis.push(`owner_org_id = ${quote(query.viewer.orgId)}`);
  out.push(`(${vis.join(' OR ')})`);
  // Strings cannot be range-compared in every Meilisearch version, so the keyset is: scores up to
  // the cursor's, and the cursor's tie group (sorted by agent_url) is skipped by offset `n`.
  if (cursor) out.push(`base_score <= ${num(cursor.s)}`);
  return out;
}

export function searchParams(query: AgentSearchQuery, cursor: SearchCursor | null) {
  return {
    filter: buildFilter(query, cursor),
    sort: ['base_score:desc', 'agent_url:asc'],
    offset: cursor ? cursor.n : 0,
    limit: query.limit + 1,
  };
}

export function fromMeiliHit(hit: MeiliAgentDocument, query: AgentSearchQuery): AgentSearchHit & { base: number } {
  const active = activeDimensions(query.filters);
  const matched = active.filter((d) => (hit[d] ?? []).some((x) => query.filters[d]!.includes(x)));
  return {
    agent_url: hit.agent_url,
    channels: hit.channels,
    property_types: hit.property_types,
    markets: hit.markets,
    categories: hit.categories,
    tags: hit.tags,
    delivery_types: hit.delivery_types,
    format_ids: hit.format_ids,
    property_count: hit.property_count,
    publisher_count: hit.publisher_count,
    has_tmp: hit.has_tmp,
    category_taxonomy: hit.category_taxonomy,
    updated_at: hit.updated_at,
    relevance_score: relevanceScore(matched.length, active.length, hit.base_score),
    matched_filters: matched,
    base: hit.base_score,
  };
}
