import * as v from 'valibot';
import { ScenarioError } from '../../core/ports/test-controller.ts';
import { accountRef } from '../../lib/adcp/request-fields.ts';
import { governanceAgentOf } from './governance-agents.ts';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Json } from '../../core/task.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';
import type { CreditLimit, SalesAccount, SalesAccountRef, SalesAccountsPort } from '../../core/ports/sales-accounts.ts';
import { AccountCache } from './account-cache.ts';

export type AccountRow = SalesAccount;
type AccountRef = SalesAccountRef;

export interface AccountsOptions {
  /** Every account is a sandbox one (no real money): the public test agent. */
  sandbox: boolean;
  /** Sandbox only: accounts a caller with none finds in list_accounts (a test account that pre-exists). */
  sandboxAccounts: { brand: { domain: string }; operator: string }[];
}

/** What the account tasks and the port share (built once in init). */
export interface AccountsDeps {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  options: AccountsOptions;
  /** Seals the governance agents' credentials at rest (sync_governance); absent: stored as given. */
  box?: SecretBoxPort;
  /** The accounts reads outside a transaction resolve (absent: every read goes to the database). */
  cache?: AccountCache;
}

type AccountDeps = Pick<AccountsDeps, 'options' | 'ids' | 'clock' | 'db' | 'cache'>;

/** Whether an account of this natural key is a sandbox one: always, on a sandbox-only deployment. */
export const isSandbox = (deps: AccountDeps, flag: boolean | undefined) => deps.options.sandbox || (flag ?? false);

/**
 * The account `ref` names, owned by `owner`. A read on the database itself (outside any transaction)
 * goes through the cache; one in a transaction reads the row, as of that transaction.
 */
async function findAccount(deps: AccountDeps, q: Queryable, owner: string, ref: AccountRef): Promise<AccountRow | undefined> {
  const cache = deps.cache;
  if (!cache || q !== deps.db) return readAccount(deps, q, owner, ref);
  const hit =
    'account_id' in ref ? cache.get(ref.account_id) : cache.find(AccountCache.naturalKey(owner, ref.brand.domain, ref.operator, isSandbox(deps, ref.sandbox)));
  // An account id of another owner is not the caller's: the database would find nothing either.
  if (hit) return hit.owner === owner ? hit : undefined;
  return cache.load(() => readAccount(deps, q, owner, ref));
}

async function readAccount(deps: AccountDeps, q: Queryable, owner: string, ref: AccountRef): Promise<AccountRow | undefined> {
  const rows =
    'account_id' in ref
      ? await q.query<AccountRow>(sql`SELECT * FROM sales_accounts WHERE account_id = ${ref.account_id}::text AND owner = ${owner}::text`)
      : await q.query<AccountRow>(sql`SELECT * FROM sales_accounts WHERE owner = ${owner}::text AND brand_domain = ${ref.brand.domain}::text
          AND operator = ${ref.operator}::text AND sandbox = ${isSandbox(deps, ref.sandbox)}::boolean`);
  return rows[0];
}

/** A new active account of `owner` for a brand and operator (`account_id` given, or minted). */
export function newAccount(
  deps: Pick<AccountDeps, 'ids'>,
  owner: string,
  a: {
    brand_domain: string;
    operator: string;
    billing: string;
    payment_terms?: string | null;
    credit_limit?: CreditLimit | null;
    sandbox: boolean;
    account_id?: string;
  },
): AccountRow {
  return {
    account_id: a.account_id ?? `acc_${deps.ids.uuid7().replace(/-/g, '')}`,
    owner,
    brand_domain: a.brand_domain,
    operator: a.operator,
    billing: a.billing,
    payment_terms: a.payment_terms ?? null,
    credit_limit: a.credit_limit ?? null,
    sandbox: a.sandbox,
    status: 'active',
    name: `${a.brand_domain} via ${a.operator}`,
  };
}

/** Write a new account; `ifAbsent` leaves one of the same natural key in place (and returns nothing). */
export async function insertAccount(q: Queryable, row: AccountRow, now: Date, ifAbsent = false): Promise<AccountRow | undefined> {
  const rows = await q.query<AccountRow>(sql`
    INSERT INTO sales_accounts (account_id, owner, brand_domain, operator, billing, payment_terms, credit_limit, sandbox, status, name, created_at, updated_at)
    VALUES (${row.account_id}::text, ${row.owner}::text, ${row.brand_domain}::text, ${row.operator}::text, ${row.billing}::text, ${row.payment_terms}::text,
            ${row.credit_limit}::jsonb, ${row.sandbox}::boolean, ${row.status}::text, ${row.name}::text, ${now}::timestamptz, ${now}::timestamptz)
    ${ifAbsent ? sql`ON CONFLICT (owner, brand_domain, operator, sandbox) DO NOTHING` : sql.empty} RETURNING *`);
  return rows[0];
}

/**
 * A sandbox deployment trusts the buyer's {brand, operator} claim (capabilities: account
 * require_operator_auth false) and provisions the sandbox account on first reference, as
 * sync_accounts would with billing operator; a production deployment wants sync_accounts first.
 */
async function provisionSandboxAccount(deps: AccountDeps, q: Queryable, owner: string, ref: AccountRef): Promise<AccountRow | undefined> {
  if (!deps.options.sandbox || 'account_id' in ref) return undefined;
  const row = newAccount(deps, owner, { brand_domain: ref.brand.domain, operator: ref.operator, billing: 'operator', sandbox: true });
  return (await insertAccount(q, row, deps.clock.now(), true)) ?? (await findAccount(deps, q, owner, ref));
}

/**
 * The account a request names, owned by the caller; ACCOUNT_NOT_FOUND otherwise. On a sandbox
 * deployment every natural key exists: the first reference, read or write, provisions it.
 */
export async function resolveAccount(deps: AccountDeps, q: Queryable, owner: string, ref: AccountRef, field = 'account'): Promise<AccountRow> {
  const account = (await findAccount(deps, q, owner, ref)) ?? (await provisionSandboxAccount(deps, q, owner, ref));
  if (!account) {
    throw new ProtocolError(
      'ACCOUNT_NOT_FOUND',
      'account_id' in ref
        ? `No account ${ref.account_id.slice(0, 128)} for this caller`
        : `No account for brand ${ref.brand.domain} operated by ${ref.operator}`,
      {
        status: 404,
        field,
        suggestion: 'Create it with sync_accounts, or use an account_id from list_accounts',
      },
    );
  }
  if (account.status !== 'active') {
    throw new ProtocolError('ACCOUNT_SUSPENDED', `Account ${account.account_id} is ${account.status}`, { status: 403, field });
  }
  return account;
}

/** An account as list_accounts shows it (core/account.json). */
export function renderAccount(a: AccountRow): Json {
  const out: Json = {
    account_id: a.account_id,
    name: a.name,
    status: a.status,
    brand: { domain: a.brand_domain },
    operator: a.operator,
    billing: a.billing,
    sandbox: a.sandbox,
  };
  if (a.payment_terms) out.payment_terms = a.payment_terms;
  if (a.credit_limit) out.credit_limit = { ...a.credit_limit };
  return out;
}

/** An account by its id, whoever owns it (the operator's commands). */
export async function accountById(q: Queryable, accountId: string): Promise<AccountRow | undefined> {
  return (await q.query<AccountRow>(sql`SELECT * FROM sales_accounts WHERE account_id = ${accountId}::text`))[0];
}

/**
 * The seller's credit limit of an account (`null`: the seller's default), whoever owns it: the
 * operator's setting (`bun run sales set-credit-limit`). False when there is no such account.
 */
export async function setCreditLimit(q: Queryable, accountId: string, limit: CreditLimit | null, now: Date): Promise<boolean> {
  const rows = await q.query(sql`UPDATE sales_accounts SET credit_limit = ${limit}::jsonb, updated_at = ${now}::timestamptz
    WHERE account_id = ${accountId}::text RETURNING account_id`);
  return rows.length > 0;
}

/** The SalesAccounts port of this plugin. */
export function createSalesAccounts(deps: AccountsDeps): SalesAccountsPort {
  return {
    resolve: (q, owner, ref, field) => resolveAccount(deps, q, owner, ref, field),
    find: (q, owner, ref) => findAccount(deps, q, owner, ref),
    async sandboxFixture(q, owner, account) {
      const ref = v.safeParse(accountRef, account ?? null);
      if (!ref.success)
        throw new ScenarioError('INVALID_PARAMS', 'account: a seeded fixture belongs to a sandbox account; send account {account_id} or {brand, operator}');
      let row: SalesAccount;
      try {
        row = await resolveAccount(deps, q, owner, ref.output);
      } catch (error) {
        if (error instanceof ProtocolError) throw new ScenarioError('NOT_FOUND', error.message, null);
        throw error;
      }
      if (!row.sandbox) throw new ScenarioError('FORBIDDEN', `Account ${row.account_id} is not a sandbox account`, null);
      return row;
    },
    governanceAgent: (q, accountId) => governanceAgentOf(deps.box, q, accountId),
    async byIds(q, ids) {
      const read = (wanted: readonly string[]) =>
        wanted.length ? q.query<AccountRow>(sql`SELECT * FROM sales_accounts WHERE account_id = ANY(${[...wanted]}::text[])`) : Promise.resolve([]);
      const cache = deps.cache;
      if (!cache || q !== deps.db) return read(ids);
      const hits = ids.map((id) => cache.get(id)).filter((a) => a !== undefined);
      return hits.length === ids.length ? hits : [...hits, ...(await cache.load(() => read(ids.filter((id) => !cache.get(id)))))];
    },
  };
}
