import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Json } from '../../core/task.ts';

export type ListKind = 'property' | 'collection';

export interface ListRow {
  list_id: string;
  kind: ListKind;
  owner: string;
  account_id: string;
  name: string;
  description: string | null;
  sources: Json[] | null;
  filters: Json | null;
  brand: Json | null;
  webhook_url: string | null;
  token_hash: string;
  resolved_count: number;
  resolved_digest: string;
  created_at: Date;
  updated_at: Date;
}

const row = (r: ListRow): ListRow => ({ ...r, resolved_count: Number(r.resolved_count) });

export async function insertList(q: Queryable, r: ListRow): Promise<void> {
  await q.query(sql`INSERT INTO governance_lists (list_id, kind, owner, account_id, name, description, sources, filters, brand, webhook_url,
      token_hash, resolved_count, resolved_digest, created_at, updated_at)
    VALUES (${r.list_id}::text, ${r.kind}::text, ${r.owner}::text, ${r.account_id}::text, ${r.name}::text, ${r.description}::text,
      ${r.sources}::jsonb, ${r.filters}::jsonb, ${r.brand}::jsonb, ${r.webhook_url}::text, ${r.token_hash}::text, ${r.resolved_count}::integer,
      ${r.resolved_digest}::text, ${r.created_at}::timestamptz, ${r.updated_at}::timestamptz)`);
}

/** A list by id and kind, whoever owns it (callers check ownership or the list's token). */
export async function loadList(q: Queryable, kind: ListKind, listId: string): Promise<ListRow | undefined> {
  const rows = await q.query<ListRow>(sql`SELECT * FROM governance_lists WHERE list_id = ${listId}::text AND kind = ${kind}::text`);
  return rows[0] && row(rows[0]);
}

/** Replace a list's content, if it was not changed since `seen` (false: someone else changed it first). */
export async function saveList(q: Queryable, r: ListRow, seen: Date): Promise<boolean> {
  const rows = await q.query(sql`UPDATE governance_lists SET name = ${r.name}::text, description = ${r.description}::text, sources = ${r.sources}::jsonb,
      filters = ${r.filters}::jsonb, brand = ${r.brand}::jsonb, webhook_url = ${r.webhook_url}::text, resolved_count = ${r.resolved_count}::integer,
      resolved_digest = ${r.resolved_digest}::text, updated_at = ${r.updated_at}::timestamptz
    WHERE list_id = ${r.list_id}::text AND updated_at = ${seen}::timestamptz RETURNING list_id`);
  return rows.length === 1;
}

export async function deleteList(q: Queryable, kind: ListKind, owner: string, listId: string, accountId: string | undefined): Promise<boolean> {
  const rows = await q.query(sql`DELETE FROM governance_lists WHERE list_id = ${listId}::text AND kind = ${kind}::text AND owner = ${owner}::text
    ${accountId === undefined ? sql.empty : sql`AND account_id = ${accountId}::text`} RETURNING list_id`);
  return rows.length === 1;
}

export interface ListQuery {
  kind: ListKind;
  owner: string;
  accountId?: string;
  nameContains?: string;
  /** Keyset: lists after this id (ids grow with creation time). */
  after?: string;
  limit: number;
}

/** One page of the owner's lists in creation order, and how many match in all. */
export async function queryLists(q: Queryable, query: ListQuery): Promise<{ rows: ListRow[]; total: number }> {
  const where = sql`kind = ${query.kind}::text AND owner = ${query.owner}::text
    ${query.accountId === undefined ? sql.empty : sql`AND account_id = ${query.accountId}::text`}
    ${query.nameContains ? sql`AND strpos(lower(name), lower(${query.nameContains}::text)) > 0` : sql.empty}`;
  const [rows, count] = await Promise.all([
    q.query<ListRow>(sql`SELECT * FROM governance_lists WHERE ${where} ${query.after ? sql`AND list_id > ${query.after}::text` : sql.empty}
      ORDER BY list_id LIMIT ${query.limit}::integer`),
    q.query<{ n: number }>(sql`SELECT count(*)::integer AS n FROM governance_lists WHERE ${where}`),
  ]);
  return { rows: rows.map(row), total: Number(count[0]?.n ?? 0) };
}
