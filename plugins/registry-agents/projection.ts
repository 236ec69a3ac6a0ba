import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type {
  AdagentsDiff,
  AdagentsOptions,
  AuthorizationChange,
  BrandJsonDiff,
  CollectionChange,
  OperatorProperty,
  PropertyChange,
} from '../../core/ports/discovery.ts';
import { normalizeAgentUrl, normalizeDomain } from './urls.ts';
import { ensureAgent } from './store/agents.ts';
import { refreshProfiles, type ProfileChanges } from './store/profiles.ts';
import { canonicalJson } from '../../lib/canonical-json.ts';

/** A projection's diff with the search-profile changes to sync after commit. */
export type ProjectedDiff = Omit<AdagentsDiff, 'profiles'> & { profiles: ProfileChanges };

type Json = Record<string, any>;

interface ParsedProperty {
  key: string;
  property_id: string | null;
  property_type: string;
  name: string;
  identifiers: Array<{ type: string; value: string }>;
  tags: string[];
  channels: string[];
  publisher_domain: string;
}

const isoOrNull = (x: unknown): string | null => {
  if (typeof x !== 'string') return null;
  const t = Date.parse(x);
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
};

const strings = (x: unknown): string[] => (Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : []);

/** Parse one property object of a file; null when it lacks the required fields. */
function parseProperty(p: unknown, fileDomain: string): ParsedProperty | null {
  if (!p || typeof p !== 'object') return null;
  const o = p as Json;
  if (typeof o.property_type !== 'string' || typeof o.name !== 'string' || !Array.isArray(o.identifiers)) return null;
  const identifiers = (o.identifiers as unknown[])
    .filter((i): i is Json => !!i && typeof i === 'object' && typeof (i as Json).type === 'string' && typeof (i as Json).value === 'string')
    .map((i) => ({ type: i.type as string, value: (i.value as string).trim().toLowerCase() }));
  if (identifiers.length === 0) return null;
  const propertyId = typeof o.property_id === 'string' ? o.property_id : null;
  return {
    key: propertyId ?? `${o.property_type}:${identifiers[0]!.type}:${identifiers[0]!.value}`,
    property_id: propertyId,
    property_type: o.property_type,
    name: o.name,
    identifiers,
    tags: [...new Set(strings(o.tags))].sort(),
    channels: [...new Set(strings(o.supported_channels))].sort(),
    publisher_domain: (typeof o.publisher_domain === 'string' && normalizeDomain(o.publisher_domain)) || fileDomain,
  };
}

interface Grant {
  authorization_type: string;
  delegation_type: string | null;
  authorized_for: string | null;
  countries: string[];
  effective_from: string | null;
  effective_until: string | null;
}

/** Keys of the file's properties an authorized_agents[] entry covers. */
function resolveEntry(entry: Json, props: ParsedProperty[], domain: string): string[] {
  switch (entry.authorization_type) {
    case 'property_ids': {
      const ids = new Set(strings(entry.property_ids));
      return props.filter((p) => p.property_id && ids.has(p.property_id)).map((p) => p.key);
    }
    case 'property_tags': {
      const tags = new Set(strings(entry.property_tags));
      return props.filter((p) => p.tags.some((t) => tags.has(t))).map((p) => p.key);
    }
    case 'inline_properties':
      return (Array.isArray(entry.properties) ? entry.properties : [])
        .map((p: unknown) => parseProperty(p, domain))
        .filter((p: ParsedProperty | null): p is ParsedProperty => !!p)
        .map((p: ParsedProperty) => p.key);
    case 'publisher_properties': {
      const keys = new Set<string>();
      for (const sel of Array.isArray(entry.publisher_properties) ? (entry.publisher_properties as Json[]) : []) {
        const domains = new Set(
          [...strings(sel?.publisher_domains), ...(typeof sel?.publisher_domain === 'string' ? [sel.publisher_domain] : [])]
            .map((d) => normalizeDomain(d))
            .filter(Boolean),
        );
        const scoped = props.filter((p) => domains.has(p.publisher_domain));
        const ids = new Set(strings(sel?.property_ids));
        const tags = new Set(strings(sel?.property_tags));
        for (const p of scoped) {
          if (
            sel.selection_type === 'all' ||
            (sel.selection_type === 'by_id' && p.property_id && ids.has(p.property_id)) ||
            (sel.selection_type === 'by_tag' && p.tags.some((t) => tags.has(t)))
          )
            keys.add(p.key);
        }
      }
      return [...keys];
    }
    case 'signal_ids':
    case 'signal_tags':
      return [];
    default:
      // Legacy entries without a discriminator authorize the whole file.
      return entry.authorization_type === undefined ? props.map((p) => p.key) : [];
  }
}

function propertyChange(id: string, p: Pick<ParsedProperty, 'key' | 'property_type' | 'name' | 'identifiers'>): PropertyChange {
  return { property_rid: id, property_key: p.key, property_type: p.property_type, name: p.name, identifiers: p.identifiers };
}

/**
 * Project a publisher's adagents.json into the registry inside the caller's transaction and
 * return what changed. Idempotent: projecting the same document twice yields an empty diff.
 */
export async function upsertPublisherFromAdagents(
  tx: Queryable,
  rawDomain: string,
  doc: unknown,
  opts: AdagentsOptions,
  newId: () => string,
): Promise<ProjectedDiff> {
  const domain = normalizeDomain(rawDomain);
  if (!domain) throw new Error(`upsertPublisherFromAdagents: invalid domain ${JSON.stringify(rawDomain)}`);
  const now = opts.now;
  const file = (doc && typeof doc === 'object' ? doc : {}) as Json;
  const valid = opts.valid && Array.isArray(file.authorized_agents);

  // Publisher row, locked so two projections of one domain serialize.
  const publisherRowId = newId();
  const created =
    (
      await tx.query(sql`
    INSERT INTO registry_publishers (id, domain, source, created_at, updated_at)
    VALUES (${publisherRowId}::uuid, ${domain}::text, ${opts.source ?? 'adagents_json'}::text, ${now}::timestamptz, ${now}::timestamptz)
    ON CONFLICT (domain) DO NOTHING RETURNING id`)
    ).length > 0;
  const [pub] = await tx.query<{ id: string; adagents: unknown; adagents_valid: boolean }>(sql`
    SELECT id::text, adagents, adagents_valid FROM registry_publishers WHERE domain = ${domain}::text FOR UPDATE`);
  const publisherId = pub!.id;
  const changed = created || canonicalJson(pub!.adagents) !== canonicalJson(doc ?? null) || pub!.adagents_valid !== valid;

  const diff: ProjectedDiff = {
    publisher: { id: publisherId, domain, created, changed, valid },
    properties: { created: [], updated: [], stale: [], reactivated: [] },
    property_merges: [],
    collections: { created: [], updated: [], removed: [], merged: [] },
    agents_discovered: [],
    authorizations: { granted: [], revoked: [], modified: [] },
    profiles: { changed: [], removed: [] },
  };

  const existingProps = await tx.query<{
    id: string;
    property_key: string;
    property_id: string | null;
    property_type: string;
    name: string;
    identifiers: Array<{ type: string; value: string }>;
    tags: string[];
    channels: string[];
    status: string;
  }>(sql`
    SELECT id::text, property_key, property_id, property_type, name, identifiers, tags, channels, status
    FROM registry_properties WHERE publisher_id = ${publisherId}::uuid`);
  const priorAgents = await tx.query<{ agent_id: string }>(sql`
    SELECT agent_id::text FROM registry_publisher_agents WHERE publisher_id = ${publisherId}::uuid`);
  const affectedAgents = new Set(priorAgents.map((r) => r.agent_id));

  const updatePublisher = () =>
    tx.query(sql`
      UPDATE registry_publishers SET has_adagents = ${doc != null}::boolean, adagents_valid = ${valid}::boolean, adagents = ${doc ?? null}::jsonb,
        validation_errors = ${opts.errors ?? []}::jsonb, contact = ${valid ? (file.contact ?? null) : null}::jsonb,
        source = ${opts.source ?? 'adagents_json'}::text, last_validated = ${now}::timestamptz, updated_at = ${now}::timestamptz
      WHERE id = ${publisherId}::uuid`);

  if (!valid) {
    // A file that fails validation keeps its rows but hides them: active properties go stale.
    const stale = existingProps.filter((p) => p.status === 'active');
    if (stale.length) {
      await tx.query(sql`UPDATE registry_properties SET status = 'stale', updated_at = ${now}::timestamptz WHERE id = ANY(${stale.map((p) => p.id)}::uuid[])`);
    }
    diff.properties.stale = stale.map((p) =>
      propertyChange(p.id, { key: p.property_key, property_type: p.property_type, name: p.name, identifiers: p.identifiers }),
    );
    await updatePublisher();
    diff.profiles = await refreshProfiles(tx, [...affectedAgents], now);
    return diff;
  }

  // ---- Properties: top-level plus inline ones, first occurrence of a key wins.
  const parsed = new Map<string, ParsedProperty>();
  const addProps = (list: unknown) => {
    for (const raw of Array.isArray(list) ? list : []) {
      const p = parseProperty(raw, domain);
      if (p && !parsed.has(p.key)) parsed.set(p.key, p);
    }
  };
  addProps(file.properties);
  for (const e of file.authorized_agents as Json[]) if (e?.authorization_type === 'inline_properties') addProps(e.properties);

  const byKey = new Map(existingProps.map((p) => [p.property_key, p]));
  const idByKey = new Map<string, string>();
  for (const p of parsed.values()) {
    const prior = byKey.get(p.key);
    const fields = { property_id: p.property_id, property_type: p.property_type, name: p.name, identifiers: p.identifiers, tags: p.tags, channels: p.channels };
    if (!prior) {
      const id = newId();
      await tx.query(sql`
        INSERT INTO registry_properties (id, publisher_id, property_key, property_id, property_type, name, identifiers, tags, channels, status, created_at, updated_at)
        VALUES (${id}::uuid, ${publisherId}::uuid, ${p.key}::text, ${p.property_id}::text, ${p.property_type}::text, ${p.name}::text,
          ${p.identifiers}::jsonb, ${p.tags}::text[], ${p.channels}::text[], 'active', ${now}::timestamptz, ${now}::timestamptz)`);
      await writeIdentifiers(tx, id, p.identifiers);
      idByKey.set(p.key, id);
      diff.properties.created.push(propertyChange(id, p));
      continue;
    }
    idByKey.set(p.key, prior.id);
    const same =
      JSON.stringify(fields) ===
      JSON.stringify({
        property_id: prior.property_id,
        property_type: prior.property_type,
        name: prior.name,
        identifiers: prior.identifiers,
        tags: prior.tags,
        channels: prior.channels,
      });
    if (same && prior.status === 'active') continue;
    await tx.query(sql`
      UPDATE registry_properties SET property_id = ${p.property_id}::text, property_type = ${p.property_type}::text, name = ${p.name}::text,
        identifiers = ${p.identifiers}::jsonb, tags = ${p.tags}::text[], channels = ${p.channels}::text[], status = 'active', updated_at = ${now}::timestamptz
      WHERE id = ${prior.id}::uuid`);
    if (!same) await writeIdentifiers(tx, prior.id, p.identifiers);
    if (prior.status !== 'active') diff.properties.reactivated.push(propertyChange(prior.id, p));
    if (!same) diff.properties.updated.push(propertyChange(prior.id, p));
  }
  // Properties no longer in the file stop being offered: merged into a new property of the file
  // carrying the same identifiers (re-published under another key), else stale. Their
  // authorizations go below.
  const gone = existingProps.filter((p) => !parsed.has(p.property_key) && p.status === 'active');
  const stale: typeof gone = [];
  for (const p of gone) {
    const into = diff.properties.created.find((c) => overlap(c.identifiers, p.identifiers).length > 0);
    if (!into) {
      stale.push(p);
      continue;
    }
    await tx.query(
      sql`UPDATE registry_properties SET status = 'merged', merged_into = ${into.property_rid}::uuid, updated_at = ${now}::timestamptz WHERE id = ${p.id}::uuid`,
    );
    diff.property_merges.push({ rid: p.id, merged_into: into.property_rid, publisher_domain: domain, identifiers: overlap(into.identifiers, p.identifiers) });
  }
  if (stale.length) {
    await tx.query(sql`UPDATE registry_properties SET status = 'stale', updated_at = ${now}::timestamptz WHERE id = ANY(${stale.map((p) => p.id)}::uuid[])`);
    diff.properties.stale.push(
      ...stale.map((p) => propertyChange(p.id, { key: p.property_key, property_type: p.property_type, name: p.name, identifiers: p.identifiers })),
    );
  }

  await projectCollections(tx, publisherId, domain, file.collections, now, diff, newId);

  // ---- Authorized agents and per-property grants.
  const props = [...parsed.values()];
  const grants = new Map<string, Grant & { agent_id: string; agent_url: string; property_rid: string }>();
  const publisherAgents = new Map<string, { agent_url: string; authorized_for: Set<string>; types: Set<string>; delegations: Set<string> }>();
  for (const entry of file.authorized_agents as Json[]) {
    if (!entry || typeof entry !== 'object' || typeof entry.url !== 'string') continue;
    const url = normalizeAgentUrl(entry.url);
    if (!url) continue;
    const agent = await ensureAgent(tx, url, now, newId);
    affectedAgents.add(agent.id);
    const delegation = typeof entry.delegation_type === 'string' ? entry.delegation_type : null;
    const authorizedFor = typeof entry.authorized_for === 'string' ? entry.authorized_for : null;
    const link = publisherAgents.get(agent.id) ?? { agent_url: url, authorized_for: new Set(), types: new Set(), delegations: new Set() };
    if (authorizedFor) link.authorized_for.add(authorizedFor);
    link.types.add(typeof entry.authorization_type === 'string' ? entry.authorization_type : 'legacy');
    if (delegation) link.delegations.add(delegation);
    publisherAgents.set(agent.id, link);
    for (const key of resolveEntry(entry, props, domain)) {
      const propertyRid = idByKey.get(key);
      if (!propertyRid) continue;
      grants.set(`${agent.id}|${propertyRid}`, {
        agent_id: agent.id,
        agent_url: url,
        property_rid: propertyRid,
        authorization_type: typeof entry.authorization_type === 'string' ? entry.authorization_type : 'legacy',
        delegation_type: delegation,
        authorized_for: authorizedFor,
        countries: [...new Set(strings(entry.countries))].sort(),
        effective_from: isoOrNull(entry.effective_from),
        effective_until: isoOrNull(entry.effective_until),
      });
    }
  }

  const before = await tx.query<Grant & { agent_id: string; agent_url: string; property_rid: string }>(sql`
    SELECT z.agent_id::text, a.url AS agent_url, z.property_id::text AS property_rid, z.authorization_type, z.delegation_type, z.authorized_for, z.countries,
      to_char(z.effective_from AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS effective_from,
      to_char(z.effective_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS effective_until
    FROM registry_authorizations z JOIN registry_agents a ON a.id = z.agent_id WHERE z.publisher_id = ${publisherId}::uuid`);
  const beforeByKey = new Map(before.map((g) => [`${g.agent_id}|${g.property_rid}`, g]));
  const change = (g: Grant & { agent_id: string; agent_url: string; property_rid: string }): AuthorizationChange => ({
    agent_id: g.agent_id,
    agent_url: g.agent_url,
    property_rid: g.property_rid,
    publisher_domain: domain,
    delegation_type: g.delegation_type,
    authorized_for: g.authorized_for,
  });
  const normDate = (s: string | null) => (s ? new Date(s).toISOString() : null);
  for (const [key, g] of grants) {
    const prior = beforeByKey.get(key);
    const same =
      prior &&
      prior.authorization_type === g.authorization_type &&
      prior.delegation_type === g.delegation_type &&
      prior.authorized_for === g.authorized_for &&
      JSON.stringify(prior.countries) === JSON.stringify(g.countries) &&
      normDate(prior.effective_from) === normDate(g.effective_from) &&
      normDate(prior.effective_until) === normDate(g.effective_until);
    if (same) continue;
    await tx.query(sql`
      INSERT INTO registry_authorizations (agent_id, property_id, publisher_id, authorization_type, delegation_type, authorized_for, countries, effective_from, effective_until, created_at, updated_at)
      VALUES (${g.agent_id}::uuid, ${g.property_rid}::uuid, ${publisherId}::uuid, ${g.authorization_type}::text, ${g.delegation_type}::text, ${g.authorized_for}::text,
        ${g.countries}::text[], ${g.effective_from}::timestamptz, ${g.effective_until}::timestamptz, ${now}::timestamptz, ${now}::timestamptz)
      ON CONFLICT (agent_id, property_id) DO UPDATE SET authorization_type = EXCLUDED.authorization_type, delegation_type = EXCLUDED.delegation_type,
        authorized_for = EXCLUDED.authorized_for, countries = EXCLUDED.countries, effective_from = EXCLUDED.effective_from,
        effective_until = EXCLUDED.effective_until, updated_at = EXCLUDED.updated_at`);
    (prior ? diff.authorizations.modified : diff.authorizations.granted).push(change(g));
  }
  const revoked = before.filter((g) => !grants.has(`${g.agent_id}|${g.property_rid}`));
  for (const g of revoked) {
    await tx.query(sql`DELETE FROM registry_authorizations WHERE agent_id = ${g.agent_id}::uuid AND property_id = ${g.property_rid}::uuid`);
    diff.authorizations.revoked.push(change(g));
  }

  // ---- Publisher-level agent list (lookup by domain).
  const priorIds = new Set(priorAgents.map((r) => r.agent_id));
  for (const [agentId, link] of publisherAgents) {
    if (!priorIds.has(agentId)) diff.agents_discovered.push({ agent_id: agentId, agent_url: link.agent_url });
    await tx.query(sql`
      INSERT INTO registry_publisher_agents (publisher_id, agent_id, authorized_for, authorization_types, delegation_types, created_at, updated_at)
      VALUES (${publisherId}::uuid, ${agentId}::uuid, ${[...link.authorized_for].join('; ') || null}::text, ${[...link.types].sort()}::text[],
        ${[...link.delegations].sort()}::text[], ${now}::timestamptz, ${now}::timestamptz)
      ON CONFLICT (publisher_id, agent_id) DO UPDATE SET authorized_for = EXCLUDED.authorized_for, authorization_types = EXCLUDED.authorization_types,
        delegation_types = EXCLUDED.delegation_types, updated_at = CASE
          WHEN registry_publisher_agents.authorized_for IS DISTINCT FROM EXCLUDED.authorized_for
            OR registry_publisher_agents.authorization_types <> EXCLUDED.authorization_types
            OR registry_publisher_agents.delegation_types <> EXCLUDED.delegation_types THEN EXCLUDED.updated_at
          ELSE registry_publisher_agents.updated_at END`);
  }
  const dropped = [...priorIds].filter((id) => !publisherAgents.has(id));
  if (dropped.length) {
    await tx.query(sql`DELETE FROM registry_publisher_agents WHERE publisher_id = ${publisherId}::uuid AND agent_id = ANY(${dropped}::uuid[])`);
  }

  await updatePublisher();
  diff.profiles = await refreshProfiles(tx, [...affectedAgents], now);
  return diff;
}

/** Identifiers two lists share (same type and value). */
function overlap(a: ReadonlyArray<{ type: string; value: string }>, b: ReadonlyArray<{ type: string; value: string }>) {
  const keys = new Set(b.map((i) => `${i.type}|${i.value}`));
  return a.filter((i) => keys.has(`${i.type}|${i.value}`));
}

interface ParsedCollection {
  collection_id: string;
  name: string;
  kind: string | null;
  data: Json;
  distribution: CollectionChange['distribution'];
}

function parseCollections(list: unknown, fileDomain: string): ParsedCollection[] {
  const out = new Map<string, ParsedCollection>();
  for (const c of Array.isArray(list) ? (list as unknown[]) : []) {
    if (!c || typeof c !== 'object') continue;
    const o = c as Json;
    if (typeof o.collection_id !== 'string' || !o.collection_id || typeof o.name !== 'string' || out.has(o.collection_id)) continue;
    const distribution = (Array.isArray(o.distribution) ? (o.distribution as Json[]) : [])
      .filter((d) => d && typeof d === 'object')
      .map((d) => ({
        publisher_domain: (typeof d.publisher_domain === 'string' && normalizeDomain(d.publisher_domain)) || fileDomain,
        identifiers: (Array.isArray(d.identifiers) ? (d.identifiers as Json[]) : [])
          .filter((i) => i && typeof i.type === 'string' && typeof i.value === 'string')
          .map((i) => ({ type: i.type as string, value: (i.value as string).trim().toLowerCase() })),
      }))
      .filter((d) => d.identifiers.length > 0);
    out.set(o.collection_id, { collection_id: o.collection_id, name: o.name, kind: typeof o.kind === 'string' ? o.kind : null, data: o, distribution });
  }
  return [...out.values()];
}

/**
 * Project a file's collections: created, updated (data or distribution changed), removed (no longer
 * listed), and merged: a collection whose distribution identifiers overlap an older active collection
 * (of this or another publisher) is the same show, so it becomes merged into that one.
 */
async function projectCollections(
  tx: Queryable,
  publisherId: string,
  domain: string,
  list: unknown,
  now: Date,
  diff: ProjectedDiff,
  newId: () => string,
): Promise<void> {
  const parsed = parseCollections(list, domain);
  const existing = await tx.query<{ id: string; collection_id: string; name: string; kind: string | null; data: Json; status: string }>(sql`
    SELECT id::text, collection_id, name, kind, data, status FROM registry_collections WHERE publisher_id = ${publisherId}::uuid`);
  const byId = new Map(existing.map((c) => [c.collection_id, c]));
  const change = (rid: string, c: Pick<ParsedCollection, 'collection_id' | 'name' | 'kind' | 'distribution'>): CollectionChange => ({
    collection_rid: rid,
    collection_id: c.collection_id,
    publisher_domain: domain,
    name: c.name,
    kind: c.kind,
    distribution: c.distribution,
  });
  const touched: Array<{ rid: string; distribution: ParsedCollection['distribution'] }> = [];
  for (const c of parsed) {
    const prior = byId.get(c.collection_id);
    if (prior && prior.status === 'merged') continue; // already one with another record
    let rid = prior?.id;
    if (!prior) {
      rid = newId();
      await tx.query(sql`
        INSERT INTO registry_collections (id, publisher_id, collection_id, name, kind, data, status, created_at, updated_at)
        VALUES (${rid}::uuid, ${publisherId}::uuid, ${c.collection_id}::text, ${c.name}::text, ${c.kind}::text, ${c.data}::jsonb, 'active', ${now}::timestamptz, ${now}::timestamptz)`);
      diff.collections.created.push(change(rid, c));
    } else if (canonicalJson(prior.data) !== canonicalJson(c.data) || prior.status !== 'active') {
      await tx.query(sql`
        UPDATE registry_collections SET name = ${c.name}::text, kind = ${c.kind}::text, data = ${c.data}::jsonb, status = 'active', updated_at = ${now}::timestamptz
        WHERE id = ${prior.id}::uuid`);
      diff.collections.updated.push(change(prior.id, c));
    } else continue;
    await tx.query(sql`DELETE FROM registry_collection_identifiers WHERE collection_rid = ${rid!}::uuid`);
    const ids = c.distribution.flatMap((d) => d.identifiers.map((i) => ({ ...i, publisher_domain: d.publisher_domain })));
    if (ids.length) {
      await tx.query(sql`
        INSERT INTO registry_collection_identifiers (collection_rid, type, value, publisher_domain)
        SELECT ${rid!}::uuid, t, v, p FROM unnest(${ids.map((i) => i.type)}::text[], ${ids.map((i) => i.value)}::text[], ${ids.map((i) => i.publisher_domain)}::text[]) AS x(t, v, p)
        ON CONFLICT DO NOTHING`);
    }
    touched.push({ rid: rid!, distribution: c.distribution });
  }
  const listed = new Set(parsed.map((c) => c.collection_id));
  for (const prior of existing) {
    if (listed.has(prior.collection_id) || prior.status !== 'active') continue;
    await tx.query(sql`UPDATE registry_collections SET status = 'removed', updated_at = ${now}::timestamptz WHERE id = ${prior.id}::uuid`);
    diff.collections.removed.push(change(prior.id, { collection_id: prior.collection_id, name: prior.name, kind: prior.kind, distribution: [] }));
  }
  // Merges: the newer record goes into the oldest active one sharing a distribution identifier.
  for (const t of touched) {
    const ids = t.distribution.flatMap((d) => d.identifiers);
    if (!ids.length) continue;
    const [other] = await tx.query<{ id: string }>(sql`
      SELECT c.id::text FROM registry_collections c
      WHERE c.status = 'active' AND c.id <> ${t.rid}::uuid AND c.id < ${t.rid}::uuid
        AND EXISTS (SELECT 1 FROM registry_collection_identifiers i
                    WHERE i.collection_rid = c.id AND (i.type, i.value) IN (SELECT * FROM unnest(${ids.map((i) => i.type)}::text[], ${ids.map((i) => i.value)}::text[])))
      ORDER BY c.id LIMIT 1`);
    if (!other) continue;
    const shared = await tx.query<{ type: string; value: string }>(sql`
      SELECT DISTINCT type, value FROM registry_collection_identifiers WHERE collection_rid = ${other.id}::uuid
        AND (type, value) IN (SELECT * FROM unnest(${ids.map((i) => i.type)}::text[], ${ids.map((i) => i.value)}::text[])) ORDER BY type, value`);
    await tx.query(
      sql`UPDATE registry_collections SET status = 'merged', merged_into = ${other.id}::uuid, updated_at = ${now}::timestamptz WHERE id = ${t.rid}::uuid`,
    );
    diff.collections.merged.push({ rid: t.rid, merged_into: other.id, publisher_domain: domain, identifiers: shared });
  }
}

async function writeIdentifiers(tx: Queryable, propertyId: string, identifiers: Array<{ type: string; value: string }>): Promise<void> {
  await tx.query(sql`DELETE FROM registry_property_identifiers WHERE property_id = ${propertyId}::uuid`);
  if (identifiers.length === 0) return;
  await tx.query(sql`
    INSERT INTO registry_property_identifiers (property_id, type, value)
    SELECT ${propertyId}::uuid, t, v FROM unnest(${identifiers.map((i) => i.type)}::text[], ${identifiers.map((i) => i.value)}::text[]) AS x(t, v)
    ON CONFLICT DO NOTHING`);
}

// ---- brand.json (operator side) ------------------------------------------------------------

/** Properties and agents a brand.json declares (top level, house level and every brands[] entry). */
export function brandJsonDeclarations(doc: unknown): { properties: OperatorProperty[]; agents: Array<{ url: string; type: string | null }>; names: string[] } {
  const file = (doc && typeof doc === 'object' ? doc : {}) as Json;
  const properties = new Map<string, OperatorProperty>();
  const agents = new Map<string, { url: string; type: string | null }>();
  const names = new Set<string>();
  const scopes: Array<{ node: Json; brandId: string | null }> = [{ node: file, brandId: null }];
  for (const b of Array.isArray(file.brands) ? (file.brands as Json[]) : [])
    if (b && typeof b === 'object') scopes.push({ node: b, brandId: typeof b.id === 'string' ? b.id : null });
  if (typeof file.house?.name === 'string') names.add(file.house.name);
  for (const { node, brandId } of scopes) {
    for (const n of Array.isArray(node.names) ? node.names : []) for (const value of Object.values(n ?? {})) if (typeof value === 'string') names.add(value);
    if (typeof node.name === 'string') names.add(node.name);
    for (const p of Array.isArray(node.properties) ? (node.properties as Json[]) : []) {
      if (!p || typeof p.type !== 'string' || typeof p.identifier !== 'string') continue;
      const prop = {
        property_type: p.type,
        identifier: p.identifier.trim().toLowerCase(),
        relationship: typeof p.relationship === 'string' ? p.relationship : 'owned',
        brand_id: brandId,
      };
      properties.set(`${prop.property_type}|${prop.identifier}`, prop);
    }
    const agentList = [...(Array.isArray(node.agents) ? node.agents : []), ...(node.brand_agent ? [node.brand_agent] : [])] as Json[];
    for (const a of agentList) {
      const url = typeof a?.url === 'string' ? normalizeAgentUrl(a.url) : null;
      if (url) agents.set(url, { url, type: typeof a.type === 'string' ? a.type : null });
    }
  }
  return { properties: [...properties.values()], agents: [...agents.values()], names: [...names] };
}

/**
 * Project an operator's brand.json: its property declarations (with relationship) and the agents
 * it operates. An invalid document declares nothing.
 */
export async function upsertOperatorFromBrandJson(tx: Queryable, rawDomain: string, doc: unknown, opts: { valid: boolean; now: Date }): Promise<BrandJsonDiff> {
  const domain = normalizeDomain(rawDomain);
  if (!domain) throw new Error(`upsertOperatorFromBrandJson: invalid domain ${JSON.stringify(rawDomain)}`);
  const decl = opts.valid ? brandJsonDeclarations(doc) : { properties: [], agents: [], names: [] };
  const houseName = opts.valid && typeof (doc as Json)?.house?.name === 'string' ? (doc as Json).house.name : (decl.names[0] ?? null);
  const created =
    (
      await tx.query(sql`
    INSERT INTO registry_operators (domain, brand_json, brand_json_valid, house_name, brand_names, updated_at)
    VALUES (${domain}::text, ${doc ?? null}::jsonb, ${opts.valid}::boolean, ${houseName}::text, ${decl.names}::text[], ${opts.now}::timestamptz)
    ON CONFLICT (domain) DO NOTHING RETURNING domain`)
    ).length > 0;
  if (!created) {
    await tx.query(sql`
      UPDATE registry_operators SET brand_json = ${doc ?? null}::jsonb, brand_json_valid = ${opts.valid}::boolean, house_name = ${houseName}::text,
        brand_names = ${decl.names}::text[], updated_at = ${opts.now}::timestamptz
      WHERE domain = ${domain}::text`);
  }
  const diff: BrandJsonDiff = { domain, created, properties: { added: [], removed: [], changed: [] }, agents: { added: [], removed: [] } };

  const priorProps = await tx.query<OperatorProperty>(sql`
    SELECT property_type, identifier, relationship, brand_id FROM registry_operator_properties WHERE operator_domain = ${domain}::text`);
  const priorMap = new Map(priorProps.map((p) => [`${p.property_type}|${p.identifier}`, p]));
  const nextMap = new Map(decl.properties.map((p) => [`${p.property_type}|${p.identifier}`, p]));
  for (const [key, p] of nextMap) {
    const prior = priorMap.get(key);
    if (prior && prior.relationship === p.relationship && prior.brand_id === p.brand_id) continue;
    (prior ? diff.properties.changed : diff.properties.added).push(p);
  }
  for (const [key, p] of priorMap) if (!nextMap.has(key)) diff.properties.removed.push(p);
  await tx.query(sql`DELETE FROM registry_operator_properties WHERE operator_domain = ${domain}::text`);
  if (decl.properties.length) {
    await tx.query(sql`
      INSERT INTO registry_operator_properties (operator_domain, property_type, identifier, relationship, brand_id)
      SELECT ${domain}::text, t, i, r, b FROM unnest(${decl.properties.map((p) => p.property_type)}::text[], ${decl.properties.map((p) => p.identifier)}::text[],
        ${decl.properties.map((p) => p.relationship)}::text[], ${decl.properties.map((p) => p.brand_id)}::text[]) AS x(t, i, r, b)`);
  }

  const priorAgents = await tx.query<{ agent_url: string }>(sql`SELECT agent_url FROM registry_operator_agents WHERE operator_domain = ${domain}::text`);
  const priorUrls = new Set(priorAgents.map((a) => a.agent_url));
  const nextUrls = new Set(decl.agents.map((a) => a.url));
  diff.agents.added = [...nextUrls].filter((u) => !priorUrls.has(u));
  diff.agents.removed = [...priorUrls].filter((u) => !nextUrls.has(u));
  await tx.query(sql`DELETE FROM registry_operator_agents WHERE operator_domain = ${domain}::text`);
  if (decl.agents.length) {
    await tx.query(sql`
      INSERT INTO registry_operator_agents (operator_domain, agent_url, agent_type)
      SELECT ${domain}::text, u, t FROM unnest(${decl.agents.map((a) => a.url)}::text[], ${decl.agents.map((a) => a.type)}::text[]) AS x(u, t)`);
  }
  return diff;
}

// ---- Service for other plugins (the crawl pipeline) -----------------------------------------
