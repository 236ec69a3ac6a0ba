import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { AccountRef } from './schemas.ts';
import type { ContentDeps } from './deps.ts';

interface AccountRow {
  account_id: string;
}

async function find(q: Queryable, owner: string, ref: AccountRef): Promise<string | null> {
  const rows =
    'account_id' in ref
      ? await q.query<AccountRow>(sql`SELECT account_id FROM content_standards_accounts WHERE owner = ${owner}::text AND account_id = ${ref.account_id}::text`)
      : await q.query<AccountRow>(sql`SELECT account_id FROM content_standards_accounts WHERE owner = ${owner}::text
          AND brand_domain = ${ref.brand.domain}::text AND operator = ${ref.operator}::text AND sandbox = ${ref.sandbox ?? false}::boolean`);
  return rows[0]?.account_id ?? null;
}

/**
 * The account that will own new standards. A natural key {brand, operator, sandbox} names the
 * caller's account for that brand and operator, provisioned on first use (the governance agent
 * has no sync_accounts: the buyer declares the account it works for). An account_id must be one
 * this caller already has. Without `account`, the caller's only account (the task-local
 * single-account shortcut); none or several is an error naming `account`.
 */
export async function owningAccount(deps: ContentDeps, q: Queryable, owner: string, ref: AccountRef | undefined): Promise<string> {
  if (!ref) {
    const rows = await q.query<AccountRow>(sql`SELECT account_id FROM content_standards_accounts WHERE owner = ${owner}::text ORDER BY account_id LIMIT 2`);
    if (rows.length === 1) return rows[0]!.account_id;
    if (rows.length === 0)
      throw new ProtocolError('INVALID_REQUEST', 'account: required (this caller has no account yet); pass {brand: {domain}, operator}', { field: 'account' });
    throw new ProtocolError('ACCOUNT_AMBIGUOUS', 'account: this caller has several accounts; name one ({account_id} or {brand, operator})', {
      status: 400,
      field: 'account',
    });
  }
  const found = await find(q, owner, ref);
  if (found) return found;
  if ('account_id' in ref) {
    throw new ProtocolError('ACCOUNT_NOT_FOUND', `No account ${ref.account_id.slice(0, 128)} for this caller`, {
      status: 404,
      field: 'account',
      suggestion: 'Use the account_id a standards configuration of this agent showed, or the natural key {brand, operator}',
    });
  }
  const id = `acc_${deps.ids.uuid7().replace(/-/g, '')}`;
  await q.query(sql`INSERT INTO content_standards_accounts (account_id, owner, brand_domain, operator, sandbox, created_at)
    VALUES (${id}::text, ${owner}::text, ${ref.brand.domain}::text, ${ref.operator}::text, ${ref.sandbox ?? false}::boolean, ${deps.clock.now()}::timestamptz)
    ON CONFLICT (owner, brand_domain, operator, sandbox) DO NOTHING`);
  return (await find(q, owner, ref))!;
}

/**
 * The account a read or change names, for narrowing: its id, `undefined` when the request names
 * none (every account of the caller), or null when the caller has no such account (nothing matches).
 */
export async function namedAccount(q: Queryable, owner: string, ref: AccountRef | undefined): Promise<string | null | undefined> {
  if (!ref) return undefined;
  return find(q, owner, ref);
}
