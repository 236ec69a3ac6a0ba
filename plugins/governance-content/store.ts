import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Json } from '../../core/task.ts';
import type { PolicyEntry, Scope } from './schemas.ts';

export interface StandardsRow {
  standards_id: string;
  owner: string;
  account_id: string | null;
  name: string | null;
  scope: Scope;
  registry_policy_ids: string[] | null;
  policies: PolicyEntry[];
  calibration_exemplars: Json | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

const row = (r: StandardsRow): StandardsRow => ({ ...r, version: Number(r.version) });

export async function insertStandards(q: Queryable, r: StandardsRow): Promise<void> {
  await q.query(sql`INSERT INTO content_standards (standards_id, owner, account_id, name, scope, registry_policy_ids, policies, calibration_exemplars,
      version, created_at, updated_at)
    VALUES (${r.standards_id}::text, ${r.owner}::text, ${r.account_id}::text, ${r.name}::text, ${r.scope}::jsonb, ${r.registry_policy_ids}::jsonb,
      ${r.policies}::jsonb, ${r.calibration_exemplars}::jsonb, ${r.version}::integer, ${r.created_at}::timestamptz, ${r.updated_at}::timestamptz)`);
}

/** A configuration by id, whoever owns it (callers check ownership). */
export async function loadStandards(q: Queryable, standardsId: string): Promise<StandardsRow | undefined> {
  const rows = await q.query<StandardsRow>(sql`SELECT * FROM content_standards WHERE standards_id = ${standardsId}::text`);
  return rows[0] && row(rows[0]);
}

/** Replace a configuration's content if it is still at `seen` (false: someone else changed it first). */
export async function saveStandards(q: Queryable, r: StandardsRow, seen: number): Promise<boolean> {
  const rows = await q.query(sql`UPDATE content_standards SET scope = ${r.scope}::jsonb, registry_policy_ids = ${r.registry_policy_ids}::jsonb,
      policies = ${r.policies}::jsonb, calibration_exemplars = ${r.calibration_exemplars}::jsonb, version = ${r.version}::integer,
      updated_at = ${r.updated_at}::timestamptz
    WHERE standards_id = ${r.standards_id}::text AND version = ${seen}::integer RETURNING standards_id`);
  return rows.length === 1;
}

export interface StandardsQuery {
  owner: string;
  accountId?: string;
  /** Each filter keeps configurations whose scope lists at least one of the values (jsonb ?|). */
  channels?: string[];
  languages?: string[];
  countries?: string[];
  /** Keyset: configurations after this id (ids grow with creation time). */
  after?: string;
  limit: number;
}

const anyOf = (member: string, values: string[] | undefined) =>
  values?.length ? sql`AND COALESCE(scope -> ${member}::text, '[]'::jsonb) ?| ${values}::text[]` : sql.empty;

/** One page of the owner's configurations in creation order, and how many match in all. */
export async function queryStandards(q: Queryable, query: StandardsQuery): Promise<{ rows: StandardsRow[]; total: number }> {
  const where = sql`owner = ${query.owner}::text
    ${query.accountId === undefined ? sql.empty : sql`AND account_id = ${query.accountId}::text`}
    ${anyOf('channels_any', query.channels)} ${anyOf('languages_any', query.languages)} ${anyOf('countries_all', query.countries)}`;
  const [rows, count] = await Promise.all([
    q.query<StandardsRow>(sql`SELECT * FROM content_standards WHERE ${where} ${query.after ? sql`AND standards_id > ${query.after}::text` : sql.empty}
      ORDER BY standards_id LIMIT ${query.limit}::integer`),
    q.query<{ n: number }>(sql`SELECT count(*)::integer AS n FROM content_standards WHERE ${where}`),
  ]);
  return { rows: rows.map(row), total: Number(count[0]?.n ?? 0) };
}

export interface ArtifactRow {
  owner: string;
  account_id: string | null;
  media_buy_id: string;
  record_id: string;
  package_id: string | null;
  delivered_at: Date;
  country: string | null;
  channel: string | null;
  artifact: Json;
  local_verdict: string | null;
}

/** Record an artifact; a record_id already recorded for the buy is replaced (a re-sent batch). */
export async function upsertArtifact(q: Queryable, r: ArtifactRow): Promise<void> {
  await q.query(sql`INSERT INTO content_artifacts (owner, account_id, media_buy_id, record_id, package_id, delivered_at, country, channel, artifact, local_verdict)
    VALUES (${r.owner}::text, ${r.account_id}::text, ${r.media_buy_id}::text, ${r.record_id}::text, ${r.package_id}::text, ${r.delivered_at}::timestamptz,
      ${r.country}::text, ${r.channel}::text, ${r.artifact}::jsonb, ${r.local_verdict}::text)
    ON CONFLICT (owner, media_buy_id, record_id) DO UPDATE SET account_id = EXCLUDED.account_id, package_id = EXCLUDED.package_id,
      delivered_at = EXCLUDED.delivered_at, country = EXCLUDED.country, channel = EXCLUDED.channel, artifact = EXCLUDED.artifact,
      local_verdict = EXCLUDED.local_verdict`);
}

export interface ArtifactQuery {
  owner: string;
  mediaBuyId: string;
  accountId?: string;
  packageIds?: string[];
  failuresOnly?: boolean;
  start?: string;
  end?: string;
  /** Keyset position: (delivered_at, record_id) of the last row of the previous page. */
  after?: [string, string];
  limit: number;
}

/** One page of a buy's artifacts in delivery order, and how many match in all. */
export async function queryArtifacts(q: Queryable, query: ArtifactQuery): Promise<{ rows: ArtifactRow[]; total: number }> {
  const where = sql`owner = ${query.owner}::text AND media_buy_id = ${query.mediaBuyId}::text
    ${query.accountId === undefined ? sql.empty : sql`AND account_id = ${query.accountId}::text`}
    ${query.packageIds?.length ? sql`AND package_id = ANY(${query.packageIds}::text[])` : sql.empty}
    ${query.failuresOnly ? sql`AND local_verdict = 'fail'` : sql.empty}
    ${query.start ? sql`AND delivered_at >= ${query.start}::timestamptz` : sql.empty}
    ${query.end ? sql`AND delivered_at < ${query.end}::timestamptz` : sql.empty}`;
  const after = query.after ? sql`AND (delivered_at, record_id) > (${query.after[0]}::timestamptz, ${query.after[1]}::text)` : sql.empty;
  const [rows, count] = await Promise.all([
    q.query<ArtifactRow>(sql`SELECT * FROM content_artifacts WHERE ${where} ${after} ORDER BY delivered_at, record_id LIMIT ${query.limit}::integer`),
    q.query<{ n: number }>(sql`SELECT count(*)::integer AS n FROM content_artifacts WHERE ${where}`),
  ]);
  return { rows, total: Number(count[0]?.n ?? 0) };
}

/** Whether the owner (and account, when named) has any artifact of this buy: other callers' buys are not found. */
export async function buyKnown(q: Queryable, owner: string, mediaBuyId: string, accountId: string | undefined): Promise<boolean> {
  const rows = await q.query(sql`SELECT 1 FROM content_artifacts WHERE owner = ${owner}::text AND media_buy_id = ${mediaBuyId}::text
    ${accountId === undefined ? sql.empty : sql`AND account_id = ${accountId}::text`} LIMIT 1`);
  return rows.length > 0;
}
