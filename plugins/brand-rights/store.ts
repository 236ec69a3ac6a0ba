import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Json } from '../../core/task.ts';

/** brand/rights-terms.json as granted. */
export interface Terms {
  pricing_option_id: string;
  amount: number;
  currency: string;
  uses: string[];
  period?: string;
  impression_cap?: number;
  overage_cpm?: number;
  start_date?: string;
  end_date?: string;
}

export interface GrantRow {
  grant_id: string;
  account_id: string;
  owner: string;
  rights_id: string;
  brand_id: string;
  status: 'pending_approval' | 'acquired' | 'revoked';
  paused: boolean;
  terms: Terms;
  countries: string[] | null;
  rights_key: string;
  revocation_webhook: Json;
  governance: Json | null;
  revoked_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertGrant(q: Queryable, r: GrantRow): Promise<void> {
  await q.query(sql`INSERT INTO brand_rights_grants (grant_id, account_id, owner, rights_id, brand_id, status, paused, terms, countries, rights_key,
      revocation_webhook, governance, revoked_reason, created_at, updated_at)
    VALUES (${r.grant_id}::text, ${r.account_id}::text, ${r.owner}::text, ${r.rights_id}::text, ${r.brand_id}::text, ${r.status}::text, ${r.paused}::boolean,
      ${r.terms as unknown as Json}::jsonb, ${r.countries}::jsonb, ${r.rights_key}::text, ${r.revocation_webhook}::jsonb,
      ${r.governance}::jsonb, ${r.revoked_reason}::text, ${r.created_at}::timestamptz, ${r.updated_at}::timestamptz)`);
}

/** The caller's grant (`FOR UPDATE` when about to change it); another organization's grant is not found. */
export async function grantOf(q: Queryable, owner: string, grantId: string, lock = false): Promise<GrantRow | null> {
  const rows = lock
    ? await q.query<GrantRow>(sql`SELECT * FROM brand_rights_grants WHERE owner = ${owner}::text AND grant_id = ${grantId}::text FOR UPDATE`)
    : await q.query<GrantRow>(sql`SELECT * FROM brand_rights_grants WHERE owner = ${owner}::text AND grant_id = ${grantId}::text`);
  return rows[0] ?? null;
}

/** A grant by id, whoever owns it (the asynchronous acquisition step reads the grant its task created). */
export async function grantById(q: Queryable, grantId: string): Promise<GrantRow | null> {
  const rows = await q.query<GrantRow>(sql`SELECT * FROM brand_rights_grants WHERE grant_id = ${grantId}::text`);
  return rows[0] ?? null;
}

export async function updateGrant(
  q: Queryable,
  r: Pick<GrantRow, 'grant_id' | 'terms' | 'paused' | 'status' | 'revoked_reason' | 'updated_at'>,
): Promise<void> {
  await q.query(sql`UPDATE brand_rights_grants SET terms = ${r.terms as unknown as Json}::jsonb, paused = ${r.paused}::boolean, status = ${r.status}::text,
      revoked_reason = ${r.revoked_reason}::text, updated_at = ${r.updated_at}::timestamptz
    WHERE grant_id = ${r.grant_id}::text`);
}
