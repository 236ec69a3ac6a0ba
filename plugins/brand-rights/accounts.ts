import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { AccountRef } from './schemas.ts';
import type { SalesAccountsPort } from '../../core/ports/sales-accounts.ts';

export interface AccountRow {
  account_id: string;
  brand_domain: string;
  operator: string;
}

/** The caller's account a reference names, without provisioning it. */
export async function findAccount(q: Queryable, owner: string, ref: AccountRef): Promise<AccountRow | null> {
  const rows =
    'account_id' in ref
      ? await q.query<AccountRow>(sql`SELECT account_id, brand_domain, operator FROM brand_rights_accounts
          WHERE owner = ${owner}::text AND account_id = ${ref.account_id}::text`)
      : await q.query<AccountRow>(sql`SELECT account_id, brand_domain, operator FROM brand_rights_accounts
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

/**
 * Whether an account is governed: the buyer synced a governance agent (sync_governance, kept by the
 * seller's accounts of this deployment) for the same brand and operator. A brand agent deployed
 * without a seller knows of none: its acquisitions are governed when they name a plan.
 */
export async function isGoverned(accounts: SalesAccountsPort | undefined, q: Queryable, owner: string, account: AccountRow | null): Promise<boolean> {
  if (!accounts || !account?.brand_domain) return false;
  const seller = await accounts.find(q, owner, { brand: { domain: account.brand_domain }, operator: account.operator });
  return !!seller && !!(await accounts.governanceAgent(q, seller.account_id));
}
