import { sql } from '../../../core/sql.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import type { Visibility } from '../../../core/ports/search.ts';
import { ProtocolError, forbidden } from '../../../core/errors.ts';
import type { AgentCapabilities } from '../../../core/ports/discovery.ts';
import { profileDocuments, refreshProfiles, type DeclaredInventory, type ProfileChanges } from './profiles.ts';
import { enqueueSearch } from './search-outbox.ts';

export const AGENT_TYPES = ['brand', 'rights', 'measurement', 'governance', 'creative', 'sales', 'buying', 'signals'] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

export interface EnrollInput {
  /** Already normalized (normalizeAgentUrl). */
  url: string;
  name: string;
  type: AgentType;
  protocol: 'mcp' | 'a2a';
  description?: string | null;
  contact?: Record<string, unknown> | null;
  visibility: Visibility;
  operator_domain?: string | null;
  inventory?: DeclaredInventory;
  capabilities?: AgentCapabilities;
}

/** The row of an agent URL, created as "discovered" when new. */
export async function ensureAgent(tx: Queryable, url: string, now: Date, newId: () => string): Promise<{ id: string; created: boolean }> {
  const id = newId();
  const inserted = await tx.query<{ id: string }>(sql`
    INSERT INTO registry_agents (id, url, discovered_at, created_at, updated_at)
    VALUES (${id}::uuid, ${url}::text, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz)
    ON CONFLICT (url) DO NOTHING RETURNING id::text`);
  if (inserted[0]) return { id: inserted[0].id, created: true };
  const [row] = await tx.query<{ id: string }>(sql`SELECT id::text FROM registry_agents WHERE url = ${url}::text`);
  return { id: row!.id, created: false };
}

export interface EnrollResult {
  agent_id: string;
  created: boolean;
  profiles: ProfileChanges;
}

/**
 * Enroll (or update) an agent in the catalog for an organization. An agent enrolled by another
 * organization cannot be taken over (409); a discovered-only agent can be claimed.
 */
export async function enrollAgent(
  tx: Queryable,
  owner: { orgId: string; orgName: string },
  input: EnrollInput,
  stamp: { now: Date; newId: () => string },
): Promise<EnrollResult> {
  const { now } = stamp;
  const { id } = await ensureAgent(tx, input.url, now, stamp.newId);
  const [row] = await tx.query<{ owner_org_id: string | null }>(sql`
    SELECT owner_org_id::text FROM registry_agents WHERE id = ${id}::uuid FOR UPDATE`);
  if (row!.owner_org_id && row!.owner_org_id !== owner.orgId) {
    throw new ProtocolError('CONFLICT', `agent ${input.url} is enrolled by another organization`, { field: 'url' });
  }
  const created = !row!.owner_org_id;
  await tx.query(sql`
    UPDATE registry_agents SET name = ${input.name}::text, type = ${input.type}::text, protocol = ${input.protocol}::text,
      description = ${input.description ?? null}::text, contact = ${input.contact ?? null}::jsonb, visibility = ${input.visibility}::text,
      operator_domain = ${input.operator_domain ?? null}::text, owner_org_id = ${owner.orgId}::uuid, owner_org_name = ${owner.orgName}::text,
      declared_inventory = ${input.inventory ?? {}}::jsonb, enrolled_at = coalesce(enrolled_at, ${now}::timestamptz), updated_at = ${now}::timestamptz
    WHERE id = ${id}::uuid`);
  if (input.capabilities) await writeCapabilities(tx, id, input.capabilities, now);
  const profiles = await refreshProfiles(tx, [id], now);
  // Visibility lives on the search document too: a visibility-only change must still reach the index.
  if (profiles.changed.length === 0) {
    profiles.changed.push(...(await profileDocuments(tx, [id])));
    await enqueueSearch(tx, [input.url], now);
  }
  return { agent_id: id, created, profiles };
}

/**
 * Remove an agent from the catalog. Rows still referenced by some publisher's adagents.json stay
 * as discovered agents (the authorization facts are the publisher's, not the owner's).
 */
export async function removeAgent(
  tx: Queryable,
  owner: { orgId: string; admin: boolean },
  url: string,
  now: Date,
): Promise<{ agent_id: string; profiles: ProfileChanges; deleted: boolean; visibility: Visibility; owner_org_id: string } | null> {
  const [row] = await tx.query<{ id: string; owner_org_id: string | null; visibility: Visibility }>(sql`
    SELECT id::text, owner_org_id::text, visibility FROM registry_agents WHERE url = ${url}::text FOR UPDATE`);
  if (!row?.owner_org_id) return null;
  if (row.owner_org_id !== owner.orgId && !owner.admin) throw forbidden('only the organization that enrolled this agent can remove it');
  const [refs] = await tx.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM registry_publisher_agents WHERE agent_id = ${row.id}::uuid`);
  if (refs!.n === 0) {
    const [p] = await tx.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM registry_agent_profiles WHERE agent_id = ${row.id}::uuid`);
    await tx.query(sql`DELETE FROM registry_agents WHERE id = ${row.id}::uuid`);
    if (p!.n) await enqueueSearch(tx, [url], now);
    return {
      agent_id: row.id,
      deleted: true,
      visibility: row.visibility,
      owner_org_id: row.owner_org_id,
      profiles: { changed: [], removed: p!.n ? [{ agent_id: row.id, agent_url: url }] : [] },
    };
  }
  await tx.query(sql`
    UPDATE registry_agents SET owner_org_id = NULL, owner_org_name = NULL, name = NULL, type = NULL, protocol = NULL, description = NULL,
      contact = NULL, visibility = 'public', operator_domain = NULL, declared_inventory = '{}'::jsonb, enrolled_at = NULL, updated_at = ${now}::timestamptz
    WHERE id = ${row.id}::uuid`);
  await tx.query(sql`DELETE FROM registry_agent_capabilities WHERE agent_id = ${row.id}::uuid`);
  const profiles = await refreshProfiles(tx, [row.id], now);
  // The search document carries visibility and owner, which changed even when the inventory did not.
  await enqueueSearch(tx, [url], now);
  return { agent_id: row.id, deleted: false, visibility: row.visibility, owner_org_id: row.owner_org_id, profiles };
}

async function writeCapabilities(tx: Queryable, agentId: string, caps: AgentCapabilities, now: Date): Promise<void> {
  const metrics = caps.metrics ?? [];
  const metricIds = [...new Set(metrics.map((m) => m.metric_id))];
  const bodies = [...new Set(metrics.flatMap((m) => (m.accreditations ?? []).map((a) => a.accrediting_body)))];
  await tx.query(sql`
    INSERT INTO registry_agent_capabilities (agent_id, creative_capabilities, signals_capabilities, metrics, metric_ids, accrediting_bodies, crawled_at)
    VALUES (${agentId}::uuid, ${caps.creative_capabilities ?? null}::jsonb, ${caps.signals_capabilities ?? null}::jsonb, ${metrics}::jsonb,
      ${metricIds}::text[], ${bodies}::text[], ${now}::timestamptz)
    ON CONFLICT (agent_id) DO UPDATE SET creative_capabilities = EXCLUDED.creative_capabilities, signals_capabilities = EXCLUDED.signals_capabilities,
      metrics = EXCLUDED.metrics, metric_ids = EXCLUDED.metric_ids, accrediting_bodies = EXCLUDED.accrediting_bodies, crawled_at = EXCLUDED.crawled_at`);
}

/** Store capability catalogs crawled from an agent (the crawler calls this on its TTL). */
export async function recordAgentCapabilities(tx: Queryable, agentUrl: string, caps: AgentCapabilities, now: Date): Promise<boolean> {
  const [row] = await tx.query<{ id: string }>(sql`SELECT id::text FROM registry_agents WHERE url = ${agentUrl}::text`);
  if (!row) return false;
  await writeCapabilities(tx, row.id, caps, now);
  return true;
}
