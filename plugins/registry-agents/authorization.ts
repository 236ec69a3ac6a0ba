import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { HostedPropertiesPort } from '../../core/ports/hosted-properties.ts';
import { normalizeAgentUrl } from './urls.ts';

/** An active property considered for an authorization check. */
export interface CandidateProperty {
  property_rid: string;
  property_id: string | null;
  name: string;
  property_type: string;
  publisher_domain: string;
  identifiers: Array<{ type: string; value: string }>;
  /**
   * Set for a property of a hosted entry (no adagents.json): its entry lists the agent (with this
   * authorized_for) or not (null). Absent for crawled properties, whose grants are in the registry.
   */
  hosted?: { authorized_for: string | null } | null;
}

export interface SideVerdict {
  ok: boolean;
  reason?: string;
}

export interface AuthorizationVerdict {
  authorized: boolean;
  /** Which side failed: publisher (adagents.json), operator (brand.json), or both. */
  failed_side: 'publisher' | 'operator' | 'both' | null;
  property: CandidateProperty | null;
  publisher_check: SideVerdict & { delegation_type?: string | null; authorized_for?: string | null };
  operator_check: SideVerdict & { operator_domain?: string; relationship?: string };
}

const PROPERTY_COLUMNS = sql`p.id::text AS property_rid, p.property_id, p.name, p.property_type, pub.domain AS publisher_domain, p.identifiers`;

/** Active properties of valid files carrying one of the identifier values. */
export async function propertiesByIdentifier(q: Queryable, type: string, values: string[]): Promise<CandidateProperty[]> {
  return q.query<CandidateProperty>(sql`
    SELECT DISTINCT ${PROPERTY_COLUMNS}
    FROM registry_property_identifiers i
    JOIN registry_properties p ON p.id = i.property_id AND p.status = 'active'
    JOIN registry_publishers pub ON pub.id = p.publisher_id AND pub.adagents_valid
    WHERE i.type = ${type}::text AND i.value = ANY(${values}::text[])
    ORDER BY publisher_domain, property_rid`);
}

export interface Selector {
  publisher_domain: string;
  selection_type: 'all' | 'by_id' | 'by_tag';
  property_ids?: string[];
  property_tags?: string[];
}

/** Active properties a product selector names (by_id ids that do not exist are reported separately). */
export async function propertiesForSelector(q: Queryable, s: Selector): Promise<{ found: CandidateProperty[]; missing_ids: string[] }> {
  const filter =
    s.selection_type === 'by_id'
      ? sql`AND p.property_id = ANY(${s.property_ids ?? []}::text[])`
      : s.selection_type === 'by_tag'
        ? sql`AND p.tags && ${s.property_tags ?? []}::text[]`
        : sql.empty;
  const found = await q.query<CandidateProperty>(sql`
    SELECT ${PROPERTY_COLUMNS}
    FROM registry_properties p JOIN registry_publishers pub ON pub.id = p.publisher_id AND pub.adagents_valid
    WHERE pub.domain = ${s.publisher_domain}::text AND p.status = 'active' ${filter}
    ORDER BY p.property_key`);
  const present = new Set(found.map((p) => p.property_id));
  const missing_ids = s.selection_type === 'by_id' ? (s.property_ids ?? []).filter((id) => !present.has(id)) : [];
  return { found, missing_ids };
}

interface GrantRow {
  property_rid: string;
  delegation_type: string | null;
  authorized_for: string | null;
}

/**
 * Two-sided check of one agent against candidate properties, evaluated now:
 * publisher side — the publisher's adagents.json authorizes the agent for the property (within its
 * effective window) with the claimed delegation_type when one is claimed;
 * operator side — a brand.json of the agent's operator (its enrolled operator_domain, or any
 * operator whose brand.json lists the agent URL) declares the property with a relationship equal
 * to that delegation_type ('owned' when the operator is the publisher itself).
 * The first candidate passing both sides wins; otherwise the closest miss is reported.
 */
export async function checkAgentAuthorization(
  q: Queryable,
  agentUrl: string,
  candidates: CandidateProperty[],
  opts: { claimedDelegation?: string | null; now: Date },
): Promise<AuthorizationVerdict> {
  const none: AuthorizationVerdict = {
    authorized: false,
    failed_side: 'publisher',
    property: null,
    publisher_check: { ok: false, reason: 'no active property in the registry carries this identifier' },
    operator_check: { ok: false, reason: 'not checked: no property to check' },
  };
  if (candidates.length === 0) return none;
  const grants = await q.query<GrantRow>(sql`
    SELECT z.property_id::text AS property_rid, z.delegation_type, z.authorized_for
    FROM registry_authorizations z JOIN registry_agents a ON a.id = z.agent_id
    WHERE a.url = ${agentUrl}::text AND z.property_id = ANY(${candidates.filter((c) => c.hosted === undefined).map((c) => c.property_rid)}::uuid[])
      AND (z.effective_from IS NULL OR z.effective_from <= ${opts.now}::timestamptz)
      AND (z.effective_until IS NULL OR z.effective_until > ${opts.now}::timestamptz)`);
  const operators = await q.query<{ domain: string }>(sql`
    SELECT operator_domain AS domain FROM registry_agents WHERE url = ${agentUrl}::text AND operator_domain IS NOT NULL
    UNION SELECT operator_domain FROM registry_operator_agents WHERE agent_url = ${agentUrl}::text`);
  const operatorDomains = operators.map((o) => o.domain);
  const identifierValues = [...new Set(candidates.flatMap((c) => c.identifiers.map((i) => i.value.toLowerCase())))];
  const declarations = operatorDomains.length
    ? await q.query<{ operator_domain: string; identifier: string; relationship: string }>(sql`
        SELECT d.operator_domain, d.identifier, d.relationship FROM registry_operator_properties d
        JOIN registry_operators o ON o.domain = d.operator_domain AND o.brand_json_valid
        WHERE d.operator_domain = ANY(${operatorDomains}::text[]) AND d.identifier = ANY(${identifierValues}::text[])`)
    : [];

  let best: AuthorizationVerdict | null = null;
  const rank = (v: AuthorizationVerdict) => (v.authorized ? 3 : v.publisher_check.ok ? 2 : v.operator_check.ok ? 1 : 0);
  for (const property of candidates) {
    const grant =
      property.hosted === undefined
        ? grants.find((g) => g.property_rid === property.property_rid)
        : property.hosted && { property_rid: property.property_rid, delegation_type: null, authorized_for: property.hosted.authorized_for };
    let publisher: AuthorizationVerdict['publisher_check'];
    if (!grant)
      publisher = {
        ok: false,
        reason:
          property.hosted === undefined
            ? `${property.publisher_domain}/.well-known/adagents.json does not authorize this agent for the property`
            : `the hosted entry of ${property.publisher_domain} does not list this agent`,
      };
    else if (opts.claimedDelegation && grant.delegation_type !== opts.claimedDelegation) {
      publisher = {
        ok: false,
        delegation_type: grant.delegation_type,
        authorized_for: grant.authorized_for,
        reason: `adagents.json delegation_type is ${grant.delegation_type ?? 'absent'}, not the claimed ${opts.claimedDelegation}`,
      };
    } else publisher = { ok: true, delegation_type: grant.delegation_type, authorized_for: grant.authorized_for };

    const expected = grant?.delegation_type ?? opts.claimedDelegation ?? null;
    const values = new Set(property.identifiers.map((i) => i.value.toLowerCase()));
    const declared = declarations.filter((d) => values.has(d.identifier));
    let operator: AuthorizationVerdict['operator_check'];
    if (operatorDomains.length === 0) operator = { ok: false, reason: 'no operator brand.json names this agent (operator unknown)' };
    else if (declared.length === 0) operator = { ok: false, reason: `brand.json of ${operatorDomains.join(', ')} does not declare this property` };
    else {
      const match = declared.find(
        (d) =>
          (expected ? d.relationship === expected : d.relationship !== 'owned') ||
          (d.relationship === 'owned' && d.operator_domain === property.publisher_domain),
      );
      operator = match
        ? { ok: true, operator_domain: match.operator_domain, relationship: match.relationship }
        : {
            ok: false,
            operator_domain: declared[0]!.operator_domain,
            relationship: declared[0]!.relationship,
            reason: `brand.json declares relationship ${declared[0]!.relationship}, adagents.json delegation_type is ${expected ?? 'absent'}`,
          };
    }
    const verdict: AuthorizationVerdict = {
      authorized: publisher.ok && operator.ok,
      failed_side: publisher.ok && operator.ok ? null : !publisher.ok && !operator.ok ? 'both' : publisher.ok ? 'operator' : 'publisher',
      property,
      publisher_check: publisher,
      operator_check: operator,
    };
    if (!best || rank(verdict) > rank(best)) best = verdict;
    if (verdict.authorized) break;
  }
  return best!;
}

/** Candidates from hosted entries carrying the identifier, each marked with whether its entry lists the agent. */
export async function hostedCandidates(
  hosted: HostedPropertiesPort | undefined,
  type: string,
  values: string[],
  agentUrl: string,
): Promise<CandidateProperty[]> {
  if (!hosted) return [];
  const out: CandidateProperty[] = [];
  for (const pub of await hosted.byIdentifier(type, values)) {
    const listed = pub.authorized_agents.find((a) => normalizeAgentUrl(a.url) === agentUrl);
    for (const p of pub.properties) {
      out.push({
        property_rid: p.property_rid,
        property_id: p.property_id,
        name: p.name,
        property_type: p.property_type,
        publisher_domain: p.publisher_domain,
        identifiers: p.identifiers.map((i) => ({ type: i.type, value: i.value.toLowerCase() })),
        hosted: listed ? { authorized_for: listed.authorized_for } : null,
      });
    }
  }
  return out;
}
