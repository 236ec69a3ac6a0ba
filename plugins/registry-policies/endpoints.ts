import { defineEndpoint, Reply, type EndpointDefinition } from '../../core/endpoint.ts';
import { ProtocolError } from '../../core/errors.ts';
import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import { likePattern } from '../../lib/revisioned/search.ts';
import * as s from './schemas.ts';
import { policyBulkOut, policyHistoryOut, policyOut, policyRegistryOut, policySaveOut } from './responses.ts';

export interface PolicyDeps {
  db: DatabasePort;
  clock: ClockPort;
}

interface Row {
  policy_id: string;
  data: s.PolicyData;
  source_type: 'registry' | 'community';
  review_status: 'pending' | 'approved';
  owner_org_id: string | null;
  revision_number: number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = sql`policy_id, data, source_type, review_status, owner_org_id::text, revision_number, created_at, updated_at`;

function summary(row: Row) {
  const d = row.data;
  return {
    policy_id: row.policy_id,
    version: d.version,
    name: d.name,
    description: d.description ?? null,
    category: d.category,
    enforcement: d.enforcement,
    jurisdictions: d.jurisdictions ?? [],
    region_aliases: d.region_aliases ?? {},
    policy_categories: d.policy_categories ?? [],
    channels: d.channels ?? null,
    governance_domains: d.governance_domains ?? [],
    effective_date: d.effective_date ?? null,
    sunset_date: d.sunset_date ?? null,
    source_url: d.source_url ?? null,
    source_name: d.source_name ?? null,
    source_type: row.source_type,
    review_status: row.review_status,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

function policy(row: Row) {
  const d = row.data;
  return {
    ...summary(row),
    policy: d.policy,
    guidance: d.guidance ?? null,
    exemplars: d.exemplars ?? null,
    ext: d.ext ?? null,
    revision_number: row.revision_number,
  };
}

const notFound = (policyId: string) => new Reply(404, { error: 'not_found', message: `No policy ${policyId} is registered`, policy_id: policyId });

/**
 * The governance policy registry (the official client's listPolicies, resolvePolicy,
 * resolvePoliciesBulk, getPolicyHistory, savePolicy): community policies keyed by policy_id, every
 * save a numbered revision with its editor and summary. Only the organization that created a
 * policy (or an admin) revises it; registry-sourced policies are not editable (409). Saves are
 * approved at once (no review queue here) and announce no feed events (the feed spec has none for policies).
 */
export function policyEndpoints(d: PolicyDeps): EndpointDefinition[] {
  const tags = ['Policies'];
  const find = async (ids: readonly string[]) =>
    d.db.query<Row>(sql`SELECT ${COLUMNS} FROM policies WHERE policy_id = ANY(${ids}::text[]) AND review_status = 'approved'`);

  const registry = defineEndpoint({
    method: 'GET',
    path: '/api/policies/registry',
    tool: 'list_policies',
    success: { schema: policyRegistryOut },
    summary: 'List approved policies with search, filters and pagination',
    tags,
    query: s.registryQuery,
    errors: [400],
    async handler({ query }) {
      const pattern = query.search ? likePattern(query.search) : null;
      const jurisdiction = query.jurisdiction?.toUpperCase();
      const where = sql.join(
        [
          sql`review_status = 'approved'`,
          pattern
            ? sql`(policy_id LIKE ${pattern}::text OR lower(data->>'name') LIKE ${pattern}::text OR lower(coalesce(data->>'description', '')) LIKE ${pattern}::text)`
            : sql`true`,
          query.category ? sql`data->>'category' = ${query.category}::text` : sql`true`,
          query.enforcement ? sql`data->>'enforcement' = ${query.enforcement}::text` : sql`true`,
          // A jurisdiction matches directly or through a region alias of a listed jurisdiction (EU -> DE).
          jurisdiction
            ? sql`(EXISTS (SELECT 1 FROM jsonb_array_elements_text(coalesce(data->'jurisdictions', '[]'::jsonb)) j WHERE upper(j) = ${jurisdiction}::text)
                OR EXISTS (SELECT 1 FROM jsonb_each(coalesce(data->'region_aliases', '{}'::jsonb)) a, jsonb_array_elements_text(a.value) m
                           WHERE upper(m) = ${jurisdiction}::text AND coalesce(data->'jurisdictions', '[]'::jsonb) ? a.key))`
            : sql`true`,
          query.policy_category ? sql`coalesce(data->'policy_categories', '[]'::jsonb) ? ${query.policy_category}::text` : sql`true`,
          query.domain ? sql`coalesce(data->'governance_domains', '[]'::jsonb) ? ${query.domain}::text` : sql`true`,
        ],
        ' AND ',
      );
      const rows = await d.db.query<Row>(sql`
        SELECT ${COLUMNS} FROM policies WHERE ${where} ORDER BY policy_id LIMIT ${query.limit}::int OFFSET ${query.offset}::int`);
      const [stats] = await d.db.query<{ total: number; regulation: number; standard: number }>(sql`
        SELECT count(*)::int AS total,
               count(*) FILTER (WHERE data->>'category' = 'regulation')::int AS regulation,
               count(*) FILTER (WHERE data->>'category' = 'standard')::int AS standard
        FROM policies WHERE ${where}`);
      return { policies: rows.map(summary), stats: stats!, total: stats!.total, limit: query.limit, offset: query.offset };
    },
  });

  const resolve = defineEndpoint({
    method: 'GET',
    path: '/api/policies/resolve',
    tool: 'resolve_policy',
    success: { schema: policyOut },
    summary: 'Resolve a policy by id; with version, only when that is the current version (else 404)',
    tags,
    query: s.resolveQuery,
    errors: [400, 404],
    async handler({ query }) {
      const [row] = await find([query.policy_id]);
      if (!row || (query.version !== undefined && row.data.version !== query.version)) return notFound(query.policy_id);
      return policy(row);
    },
  });

  const bulk = defineEndpoint({
    method: 'POST',
    path: '/api/policies/resolve/bulk',
    tool: 'resolve_policies_bulk',
    success: { schema: policyBulkOut },
    summary: 'Resolve up to 100 policies; unknown ids map to null',
    tags,
    body: s.bulkBody,
    rateLimits: [{ name: 'policy.bulk', per: 'ip', limit: 20, windowSeconds: 60 }],
    errors: [400, 429],
    async handler({ body }) {
      const rows = new Map((await find(body.policy_ids)).map((r) => [r.policy_id, r]));
      return { results: Object.fromEntries(body.policy_ids.map((id) => [id, rows.has(id) ? policy(rows.get(id)!) : null])) };
    },
  });

  const history = defineEndpoint({
    method: 'GET',
    path: '/api/policies/history',
    tool: 'policy_history',
    success: { schema: policyHistoryOut },
    summary: 'Revision history of a policy, newest first',
    tags,
    query: s.historyQuery,
    errors: [400, 404],
    async handler({ query }) {
      const [row] = await find([query.policy_id]);
      if (!row) return notFound(query.policy_id);
      const revisions = await d.db.query<{ revision_number: number; editor_name: string; edit_summary: string; is_rollback: boolean; created_at: Date }>(sql`
        SELECT revision_number, editor_name, edit_summary, is_rollback, created_at FROM policy_revisions
        WHERE policy_id = ${query.policy_id}::text ORDER BY revision_number DESC LIMIT ${query.limit}::int OFFSET ${query.offset}::int`);
      const [{ total } = { total: 0 }] = await d.db.query<{ total: number }>(
        sql`SELECT count(*)::int AS total FROM policy_revisions WHERE policy_id = ${query.policy_id}::text`,
      );
      return { policy_id: query.policy_id, total, revisions: revisions.map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString() })) };
    },
  });

  const save = defineEndpoint({
    method: 'POST',
    path: '/api/policies/save',
    tool: 'save_policy',
    success: { schema: policySaveOut },
    summary: 'Create or revise a community policy (members); each save is a numbered revision',
    tags,
    auth: 'required',
    tier: 'member',
    body: s.saveBody,
    rateLimits: [{ name: 'policy.save', per: 'principal', limit: 60, windowSeconds: 3600 }],
    errors: [400, 401, 403, 409, 429],
    async handler({ body, principal }) {
      const { policy_id: policyId, edit_summary: editSummary, ...data } = body;
      const now = d.clock.now();
      const editor = principal!.userName ?? principal!.orgName;
      const outcome = await d.db.transaction(async (tx) => {
        // Insert or lock: concurrent first saves of one id serialize on the primary key.
        const [created] = await tx.query<{ revision_number: number }>(sql`
          INSERT INTO policies (policy_id, data, source_type, review_status, owner_org_id, revision_number, created_at, updated_at)
          VALUES (${policyId}::text, ${data}::jsonb, 'community', 'approved', ${principal!.orgId}::uuid, 1, ${now}::timestamptz, ${now}::timestamptz)
          ON CONFLICT (policy_id) DO NOTHING RETURNING revision_number`);
        let revision = created?.revision_number;
        if (!created) {
          const [current] = await tx.query<Row>(sql`SELECT ${COLUMNS} FROM policies WHERE policy_id = ${policyId}::text FOR UPDATE`);
          if (!current) throw new ProtocolError('CONFLICT', `${policyId} changed concurrently; retry`);
          if (current.source_type === 'registry' || current.review_status === 'pending')
            throw new ProtocolError(
              'CONFLICT',
              `${policyId} is a ${current.source_type === 'registry' ? 'registry-sourced' : 'pending'} policy and cannot be edited`,
              {
                details: { policy_id: policyId },
              },
            );
          if (current.owner_org_id && current.owner_org_id !== principal!.orgId && principal!.tier !== 'admin')
            throw new ProtocolError('PERMISSION_DENIED', `${policyId} is maintained by another organization`);
          revision = current.revision_number + 1;
          await tx.query(sql`
            UPDATE policies SET data = ${data}::jsonb, revision_number = ${revision}::int, updated_at = ${now}::timestamptz WHERE policy_id = ${policyId}::text`);
        }
        await tx.query(sql`
          INSERT INTO policy_revisions (policy_id, revision_number, data, editor_org_id, editor_name, edit_summary, is_rollback, created_at)
          VALUES (${policyId}::text, ${revision}::int, ${data}::jsonb, ${principal!.orgId}::uuid, ${editor}::text,
            ${editSummary ?? (created ? 'Created policy' : 'Saved policy')}::text, false, ${now}::timestamptz)`);
        return { created: !!created, revision: revision! };
      });
      return {
        success: true as const,
        message: `Policy ${policyId} ${outcome.created ? 'created' : 'updated'}`,
        policy_id: policyId,
        revision_number: outcome.revision,
      };
    },
  });

  return [registry, resolve, bulk, history, save];
}
