import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';

/** `{account_id}` or `{brand: {domain}, operator, sandbox?}` (core/account-ref.json). */
export type NaturalAccountRef = { account_id: string } | { brand: { domain: string }; operator: string; sandbox?: boolean };

/**
 * Accounts of an agent without sync_accounts (a governance agent's lists, its content standards):
 * the buyer declares the account it works for, a natural key {brand, operator, sandbox} per caller
 * organization, provisioned on first use. The rows live in the calling plugin's own table
 * (account_id, owner, brand_domain, operator, sandbox, created_at; unique natural key); this only
 * holds the rules, `what` names the things the accounts own in messages ("a list").
 */
export function naturalAccounts(table: string, what: string) {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(table)) throw new Error(`not a table name: ${table}`);
  const t = sql.raw(table);
  const find = async (q: Queryable, owner: string, ref: NaturalAccountRef): Promise<string | null> => {
    const rows =
      'account_id' in ref
        ? await q.query<{ account_id: string }>(sql`SELECT account_id FROM ${t} WHERE owner = ${owner}::text AND account_id = ${ref.account_id}::text`)
        : await q.query<{ account_id: string }>(sql`SELECT account_id FROM ${t} WHERE owner = ${owner}::text
            AND brand_domain = ${ref.brand.domain}::text AND operator = ${ref.operator}::text AND sandbox = ${ref.sandbox ?? false}::boolean`);
    return rows[0]?.account_id ?? null;
  };
  return {
    /**
     * The account that will own a new record: a natural key names the caller's account for that brand
     * and operator, provisioned on first use; an account_id must be one this caller already has.
     * Without `ref`, the caller's only account; none or several is an error naming `account`.
     */
    async owningAccount(env: { ids: IdsPort; clock: ClockPort }, q: Queryable, owner: string, ref: NaturalAccountRef | undefined): Promise<string> {
      if (!ref) {
        const rows = await q.query<{ account_id: string }>(sql`SELECT account_id FROM ${t} WHERE owner = ${owner}::text ORDER BY account_id LIMIT 2`);
        if (rows.length === 1) return rows[0]!.account_id;
        if (rows.length === 0)
          throw new ProtocolError('INVALID_REQUEST', 'account: required (this caller has no account yet); pass {brand: {domain}, operator}', {
            field: 'account',
          });
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
          suggestion: `Use the account_id ${what} of this agent showed, or the natural key {brand, operator}`,
        });
      }
      const id = `acc_${env.ids.uuid7().replace(/-/g, '')}`;
      await q.query(sql`INSERT INTO ${t} (account_id, owner, brand_domain, operator, sandbox, created_at)
        VALUES (${id}::text, ${owner}::text, ${ref.brand.domain}::text, ${ref.operator}::text, ${ref.sandbox ?? false}::boolean, ${env.clock.now()}::timestamptz)
        ON CONFLICT (owner, brand_domain, operator, sandbox) DO NOTHING`);
      return (await find(q, owner, ref))!;
    },
    /** The account a read or change names: its id, undefined when none is named (all the caller's), null when the caller has no such account. */
    async namedAccount(q: Queryable, owner: string, ref: NaturalAccountRef | undefined): Promise<string | null | undefined> {
      return ref ? find(q, owner, ref) : undefined;
    },
  };
}
