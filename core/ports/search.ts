import { token } from '../token.ts';
import type { Queryable } from './database.ts';

/** Filter dimensions of agent inventory search, in the order responses list them. */
export const SEARCH_DIMENSIONS = ['channels', 'property_types', 'markets', 'categories', 'tags', 'delivery_types'] as const;
export type SearchDimension = (typeof SEARCH_DIMENSIONS)[number];

export type Visibility = 'public' | 'members_only' | 'private';

/** One agent's inventory profile as the search index holds it. */
export interface AgentProfileDocument {
  agent_url: string;
  channels: string[];
  property_types: string[];
  markets: string[];
  categories: string[];
  tags: string[];
  delivery_types: string[];
  format_ids: unknown[];
  property_count: number;
  publisher_count: number;
  has_tmp: boolean;
  category_taxonomy: string | null;
  /** ISO 8601. */
  updated_at: string;
  /** Who may see the profile; `private` only its owner organization. */
  visibility: Visibility;
  owner_org_id: string | null;
}

/** Who is searching: decides which visibilities are returned. */
export interface SearchViewer {
  /** API-tier member or admin: also sees `members_only`. */
  member: boolean;
  /** Also sees `private` profiles owned by this organization. */
  orgId: string | null;
}

export interface AgentSearchQuery {
  /** Active dimensions: OR within one dimension, AND across dimensions. Empty arrays are inactive. */
  filters: Partial<Record<SearchDimension, readonly string[]>>;
  /** `true` requires trusted-match support; `false`/absent does not filter. */
  has_tmp?: boolean;
  min_properties?: number;
  /** 1..200. */
  limit: number;
  /** Opaque cursor from a previous page of the same query. */
  cursor?: string | null;
  viewer: SearchViewer;
}

export interface AgentSearchHit extends Omit<AgentProfileDocument, 'visibility' | 'owner_org_id'> {
  relevance_score: number;
  matched_filters: SearchDimension[];
}

export interface AgentSearchPage {
  results: AgentSearchHit[];
  /** Cursor of the next page; null when there is none. */
  cursor: string | null;
  has_more: boolean;
}

/**
 * What an index has applied, as the registry's search outbox recorded it: the `generation` of the
 * last full rebuild and the highest outbox `version` applied since. The registry keeps the same
 * pair in its database (the watermark); an index whose stamp is missing, of another generation or
 * behind the watermark (a fresh Meilisearch, a restored snapshot) is rebuilt at start-up.
 */
export interface IndexStamp {
  generation: string;
  version: number;
}

/**
 * Agent inventory search. Adapters: search-postgres (default; also on PGlite) and
 * search-meilisearch. Contract (test/contract/search.contract.ts):
 * - `upsert` replaces the document of each `agent_url`; `remove` deletes; both are idempotent.
 *   Adapters backed by the registry database write through `tx` when given, so the index changes
 *   in the caller's transaction; others ignore it and apply the change at once.
 * - `search` ranks by `relevance_score` (see `relevanceScore`) descending, then `agent_url`
 *   ascending; that order is total, and the cursor pages exactly that order, so every matching
 *   document appears exactly once across pages, ties included.
 * - A malformed cursor raises INVALID_REQUEST (field `cursor`), never a 500.
 * - `stamp` returns what `setStamp` last stored, or null for a new index or after `clear`; the
 *   stamp is never a search result.
 * Only the registry's search outbox (plugins/registry-agents/search-sync.ts) writes the index of
 * a running deployment; writers enqueue changes in their own transaction instead.
 */
export interface SearchPort {
  readonly kind: string;
  upsert(documents: readonly AgentProfileDocument[], tx?: Queryable): Promise<void>;
  remove(agentUrls: readonly string[], tx?: Queryable): Promise<void>;
  search(query: AgentSearchQuery): Promise<AgentSearchPage>;
  /** Drop every document and the stamp (rebuilds, tests). */
  clear(tx?: Queryable): Promise<void>;
  stamp(tx?: Queryable): Promise<IndexStamp | null>;
  setStamp(stamp: IndexStamp, tx?: Queryable): Promise<void>;
}

export const Search = token<SearchPort>('core.search');

/**
 * The query-independent part of the score: 0.1 * ln(property_count + 1) + 0.05 when the agent
 * supports trusted match. Adapters store it with the document so every adapter sorts and pages
 * by the same float, computed once, in one place.
 */
export function baseScore(doc: Pick<AgentProfileDocument, 'property_count' | 'has_tmp'>): number {
  return 0.1 * Math.log(Math.max(0, doc.property_count) + 1) + (doc.has_tmp ? 0.05 : 0);
}

/**
 * relevance_score = matched_active_dimensions / max(1, active_dimensions) + baseScore.
 * Every hit matches every active dimension (dimensions are ANDed), so within one query the first
 * term is a constant and ordering by baseScore is ordering by relevance_score.
 */
export function relevanceScore(matched: number, active: number, base: number): number {
  return matched / Math.max(1, active) + base;
}

/** Active dimensions of a query, in SEARCH_DIMENSIONS order. */
export function activeDimensions(filters: AgentSearchQuery['filters']): SearchDimension[] {
  return SEARCH_DIMENSIONS.filter((d) => (filters[d]?.length ?? 0) > 0);
}
