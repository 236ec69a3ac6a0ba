import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { AccountRef } from './schemas.ts';

export interface AccountRow {
  account_id: string;
  brand_domain: string;
  operator: string;
  governance_agent_url: string | null;
}

/** The caller's account a reference names, without provisioning it. */
export async function findAccount(q: Queryable, owner: string, ref: AccountRef): Promise<AccountRow | null> {
  const rows =
    'account_id' in ref
      ? await q.query<AccountRow>(sql`SELECT account_id, brand_domain, operator, governance_agent_url FROM brand_rights_accounts
          WHERE owner = ${owner}::text AND account_id = ${ref.account_id}::text`)
      : await q.query<AccountRow>(sql`SELECT account_id, brand_domain, operator, governance_agent_url FROM brand_rights_accounts
          WHERE owner = ${owner}::text AND brand_domain = ${ref.brand.domain}::text AND operator = ${ref.operator}::text AND sandbox = ${ref.sandbox ?? false}::boolean`);
  return rows[0] ?? null;
}

/**
 * The caller's account a request names. A natural key {brand, operator, sandbox} is provisioned on
 * first use (the buyer declares who it works for); an account_id must be one this caller already
 * has (another organization's id is not found, never shown). Without `account`, the buyer's brand
 * (`buyer.domain`) with itself as operator.
 */
export async function resolveAccount(
  q: Queryable,
  env: { clock: ClockPort; ids: IdsPort },
  owner: string,
  ref: AccountRef | undefined,
  buyerDomain?: string,
): Promise<AccountRow> {
  const named: AccountRef | undefined = ref ?? (buyerDomain ? { brand: { domain: buyerDomain }, operator: buyerDomain } : undefined);
  if (!named) throw new ProtocolError('INVALID_REQUEST', 'account: is required', { field: 'account' });
  const found = await findAccount(q, owner, named);
  if (found) return found;
  if ('account_id' in named)
    throw new ProtocolError('ACCOUNT_NOT_FOUND', `No account ${named.account_id.slice(0, 128)} for this caller`, { status: 404, field: 'account' });
  const now = env.clock.now();
  await q.query(sql`INSERT INTO brand_rights_accounts (account_id, owner, brand_domain, operator, sandbox, created_at, updated_at)
    VALUES (${`acc_${env.ids.uuid7().replace(/-/g, '')}`}::text, ${owner}::text, ${named.brand.domain}::text, ${named.operator}::text,
      ${named.sandbox ?? false}::boolean, ${now}::timestamptz, ${now}::timestamptz)
    ON CONFLICT (owner, brand_domain, operator, sandbox) DO NOTHING`);
  return (await findAccount(q, owner, named))!;
}

/** Records (or clears) the governance agent of an account. */
export async function setGovernance(q: Queryable, accountId: string, url: string | null, now: Date): Promise<void> {
  await q.query(
    sql`UPDATE brand_rights_accounts SET governance_agent_url = ${url}::text, updated_at = ${now}::timestamptz WHERE account_id = ${accountId}::text`,
  );
}
