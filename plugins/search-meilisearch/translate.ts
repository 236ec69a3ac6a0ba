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
import type { Settings } from 'meilisearch';

/** Stored shape: the port document plus the id, the precomputed base score and the URL sort key. */
export interface MeiliAgentDocument extends Omit<AgentProfileDocument, 'owner_org_id'> {
  id: string;
  /** '' for none: Meilisearch cannot filter on null equality portably. */
  owner_org_id: string;
  base_score: number;
  /** urlKey(agent_url): what the keyset sorts and compares on. */
  url_key: string;
}

/** Meilisearch ids allow [A-Za-z0-9_-] only; a URL hash is stable and fits. */
export function documentId(agentUrl: string): string {
  return new Bun.CryptoHasher('sha256').update(agentUrl).digest('hex');
}

/**
 * Sort key of an agent URL: lower-case hex of its UTF-8 bytes. Meilisearch sorts and compares the
 * normalized (lower-cased, NFKD) form of a string facet; hex is unchanged by that normalization
 * and orders exactly as the URL's bytes do, which is the Postgres adapter's order (COLLATE "C").
 * Facet strings are cut at 468 bytes, so the order is exact for URLs up to 234 bytes.
 */
export function urlKey(agentUrl: string): string {
  return Buffer.from(agentUrl, 'utf8').toString('hex');
}

export function toMeiliDocument(doc: AgentProfileDocument): MeiliAgentDocument {
  return { ...doc, id: documentId(doc.agent_url), owner_org_id: doc.owner_org_id ?? '', base_score: baseScore(doc), url_key: urlKey(doc.agent_url) };
}

/** Id of the document holding the index stamp (IndexStamp); its visibility matches no viewer. */
export const STAMP_ID = 'index-stamp';

export interface MeiliStampDocument {
  id: typeof STAMP_ID;
  visibility: 'stamp';
  generation: string;
  version: number;
}

export const INDEX_SETTINGS = {
  // Text relevance for queries with words (Meilisearch's default order); the port's searches are
  // placeholder searches (filters only), where only `sort` decides: base_score desc, url_key asc.
  rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness'],
  searchableAttributes: ['agent_url', 'tags', 'categories', 'channels', 'property_types', 'markets', 'delivery_types'],
  filterableAttributes: [...SEARCH_DIMENSIONS, 'has_tmp', 'property_count', 'visibility', 'owner_org_id', 'base_score', 'url_key'],
  sortableAttributes: ['base_score', 'url_key'],
  pagination: { maxTotalHits: 1_000_000 },
} satisfies Settings;

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
  // The keyset of the Postgres adapter: strictly after (s, u) in (base_score desc, url_key asc).
  // String comparison in filters needs Meilisearch >= 1.15.
  if (cursor) out.push(`(base_score < ${num(cursor.s)} OR (base_score = ${num(cursor.s)} AND url_key > ${quote(urlKey(cursor.u))}))`);
  return out;
}

export function searchParams(query: AgentSearchQuery, cursor: SearchCursor | null) {
  return {
    filter: buildFilter(query, cursor),
    sort: ['base_score:desc', 'url_key:asc'],
    limit: query.limit + 1,
  };
}

/** Whether a hit comes strictly after the cursor in the port's order (guards the filter above). */
export function isAfter(hit: Pick<MeiliAgentDocument, 'base_score' | 'url_key'>, cursor: SearchCursor | null): boolean {
  if (!cursor) return true;
  return hit.base_score < cursor.s || (hit.base_score === cursor.s && hit.url_key > urlKey(cursor.u));
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
