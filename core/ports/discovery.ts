import { token } from '../token.ts';
import type { Queryable } from './database.ts';

// ---- What a crawl changed (the feed turns these into events) -------------------------------

export interface PropertyChange {
  property_rid: string;
  property_key: string;
  property_type: string;
  name: string;
  identifiers: Array<{ type: string; value: string }>;
}

export interface AuthorizationChange {
  agent_id: string;
  agent_url: string;
  property_rid: string;
  publisher_domain: string;
  delegation_type: string | null;
  authorized_for: string | null;
}

/** A record found to be the same as another (identifiers overlap): it now points at the survivor. */
export interface MergeChange {
  /** The merged (retired) record. */
  rid: string;
  merged_into: string;
  publisher_domain: string;
  /** The identifiers both records carry. */
  identifiers: Array<{ type: string; value: string }>;
}

export interface CollectionChange {
  collection_rid: string;
  collection_id: string;
  publisher_domain: string;
  name: string;
  kind: string | null;
  distribution: Array<{ publisher_domain: string; identifiers: Array<{ type: string; value: string }> }>;
}

export interface AdagentsDiff {
  publisher: { id: string; domain: string; created: boolean; changed: boolean; valid: boolean };
  properties: { created: PropertyChange[]; updated: PropertyChange[]; stale: PropertyChange[]; reactivated: PropertyChange[] };
  /** Properties no longer in the file whose identifiers a new property of the file carries. */
  property_merges: MergeChange[];
  /** Publisher collections and their distribution identifiers. */
  collections: { created: CollectionChange[]; updated: CollectionChange[]; removed: CollectionChange[]; merged: MergeChange[] };
  agents_discovered: Array<{ agent_id: string; agent_url: string }>;
  authorizations: { granted: AuthorizationChange[]; revoked: AuthorizationChange[]; modified: AuthorizationChange[] };
  /** Agents whose inventory profile changed or was removed (the feed's agent.profile_updated). */
  profiles: {
    changed: Array<{ agent_id: string; agent_url: string; property_count: number; publisher_count: number }>;
    removed: Array<{ agent_id: string; agent_url: string }>;
  };
}

export interface AdagentsOptions {
  /** Verdict of schema validation of `doc`; an invalid file makes every active property stale. */
  valid: boolean;
  errors?: unknown[];
  now: Date;
  /** Provenance recorded on the publisher (default adagents_json). */
  source?: string;
}

export interface OperatorProperty {
  property_type: string;
  identifier: string;
  relationship: string;
  brand_id: string | null;
}

export interface BrandJsonDiff {
  domain: string;
  created: boolean;
  properties: { added: OperatorProperty[]; removed: OperatorProperty[]; changed: OperatorProperty[] };
  agents: { added: string[]; removed: string[] };
}

// ---- Agent capabilities ---------------------------------------------------------------------

export interface MetricEntry {
  metric_id: string;
  accreditations?: Array<{ accrediting_body: string; [k: string]: unknown }>;
  [k: string]: unknown;
}

export interface AgentCapabilities {
  creative_capabilities?: unknown;
  signals_capabilities?: unknown;
  metrics?: MetricEntry[];
}

/** An agent as the capability refresh sees it. */
export interface AgentState {
  id: string;
  protocol: 'mcp' | 'a2a' | null;
  visibility: string;
  /** The enrolling organization (null for an agent merely discovered in someone's adagents.json). */
  owner_org_id: string | null;
  /** Enrolled by an organization. */
  enrolled: boolean;
  capabilities: Required<AgentCapabilities>;
}

/**
 * The discovery model (registry-agents owns its tables): the crawl pipeline writes what it fetched
 * and reads what it must schedule through this port only.
 * `project*` run in their own transaction; `inTransaction` runs in it (append feed events there):
 * when it throws, nothing is projected and the error is rethrown. Profile changes are queued for
 * the search index in that same transaction (SearchSync applies them), so a projection that
 * committed never fails because of the index. Projecting the same document again is an empty diff.
 * Contract: test/contract/discovery.contract.ts.
 */
export interface DiscoveryPort {
  projectAdagents(
    domain: string,
    doc: unknown,
    opts: AdagentsOptions & { inTransaction?: (tx: Queryable, diff: AdagentsDiff) => Promise<void> },
  ): Promise<AdagentsDiff>;
  projectBrandJson(
    domain: string,
    doc: unknown,
    opts: { valid: boolean; now: Date; inTransaction?: (tx: Queryable, diff: BrandJsonDiff) => Promise<void> },
  ): Promise<BrandJsonDiff>;
  /** Whether the registry knows `domain` as a publisher. */
  isKnownPublisher(domain: string): Promise<boolean>;
  /** Every known publisher with the time its adagents.json was last validated (re-crawl schedule). */
  publishers(): Promise<Array<{ domain: string; lastValidated: Date | null }>>;
  /** Every enrolled agent with the time its capabilities were last crawled (refresh schedule). */
  enrolledAgents(): Promise<Array<{ url: string; crawledAt: Date | null }>>;
  /** An agent's state, or null when unknown; `lock` takes its row lock in `q` (a transaction). */
  agentState(q: Queryable, url: string, lock?: boolean): Promise<AgentState | null>;
  /** Store crawled capability catalogs; false when the agent is unknown. */
  recordAgentCapabilities(tx: Queryable, url: string, caps: AgentCapabilities, now: Date): Promise<boolean>;
}

export const Discovery = token<DiscoveryPort>('registry.discovery');
