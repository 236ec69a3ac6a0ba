import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { accountRef, brandRef, domain, pagination, versionFields, type AccountRef } from './schemas.ts';
import { decodeOffset, fingerprint, pageInfo } from './pagination.ts';
import type { SalesDeps } from './deps.ts';

export interface AccountRow {
  account_id: string;
  owner: string;
  brand_domain: string;
  operator: string;
  billing: string;
  payment_terms: string | null;
  sandbox: boolean;
  status: string;
  name: string;
}

const ACCOUNT_STATUSES = ['active', 'pending_approval', 'rejected', 'payment_required', 'suspended', 'closed'] as const;

/** How the deployment resolves account references (SalesDeps carries all of it). */
export type AccountDeps = Pick<SalesDeps, 'options' | 'ids' | 'clock'>;

/** Whether an account of this natural key is a sandbox one: always, on a sandbox-only deployment. */
const isSandbox = (deps: AccountDeps, flag: boolean | undefined) => deps.options.sandbox || (flag ?? false);

async function findAccount(deps: AccountDeps, q: Queryable, owner: string, ref: AccountRef): Promise<AccountRow | undefined> {
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
  a: { brand_domain: string; operator: string; billing: string; payment_terms?: string | null; sandbox: boolean; account_id?: string },
): AccountRow {
  return {
    account_id: a.account_id ?? `acc_${deps.ids.uuid7().replace(/-/g, '')}`,
    owner,
    brand_domain: a.brand_domain,
    operator: a.operator,
    billing: a.billing,
    payment_terms: a.payment_terms ?? null,
    sandbox: a.sandbox,
    status: 'active',
    name: `${a.brand_domain} via ${a.operator}`,
  };
}

/** Write a new account; `ifAbsent` leaves one of the same natural key in place (and returns nothing). */
export async function insertAccount(q: Queryable, row: AccountRow, now: Date, ifAbsent = false): Promise<AccountRow | undefined> {
  const rows = await q.query<AccountRow>(sql`
    INSERT INTO sales_accounts (account_id, owner, brand_domain, operator, billing, payment_terms, sandbox, status, name, created_at, updated_at)
    VALUES (${row.account_id}::text, ${row.owner}::text, ${row.brand_domain}::text, ${row.operator}::text, ${row.billing}::text, ${row.payment_terms}::text,
            ${row.sandbox}::boolean, ${row.status}::text, ${row.name}::text, ${now}::timestamptz, ${now}::timestamptz)
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
  return out;
}

const accountInput = v.object({
  brand: brandRef,
  operator: domain,
  billing: v.picklist(['operator', 'agent', 'advertiser'], 'must be operator, agent or advertiser'),
  payment_terms: v.optional(
    v.picklist(['net_15', 'net_30', 'net_45', 'net_60', 'net_90', 'prepay'], 'must be net_15, net_30, net_45, net_60, net_90 or prepay'),
  ),
  sandbox: v.optional(v.boolean()),
});

export function syncAccountsTask(deps: SalesDeps) {
  return defineTask({
    name: 'sync_accounts',
    description:
      'Create or update the buyer accounts (brand + operator + billing) this caller buys under; idempotent. Returns each account with its action and status.',
    protocol: 'media_buy',
    mutating: true,
    // Database only: the accounts commit with the idempotency record.
    transactional: true,
    input: v.object({
      ...versionFields,
      accounts: v.pipe(
        v.array(accountInput, 'must be an array of {brand, operator, billing}'),
        v.minLength(1, 'must not be empty'),
        v.maxLength(1000, 'accepts at most 1000 accounts'),
        v.check(
          (list) => new Set(list.map((a) => `${a.brand.domain}|${a.operator}|${a.sandbox ?? false}`)).size === list.length,
          'lists the same brand and operator twice',
        ),
      ),
      delete_missing: v.optional(v.boolean()),
      dry_run: v.optional(v.boolean()),
    }),
    async handler({ input, principal, clock, ids, tx: callTx }) {
      if (input.delete_missing)
        throw new ProtocolError('UNSUPPORTED_FEATURE', 'delete_missing is not supported: close accounts with the seller', { field: 'delete_missing' });
      const owner = principal.orgId;
      const now = clock.now();
      const sandbox = (a: { sandbox?: boolean }) => isSandbox(deps, a.sandbox);
      const sync = async (tx: Queryable) => {
        const out: Json[] = [];
        for (const a of input.accounts) {
          const [existing] = await tx.query<AccountRow>(sql`SELECT * FROM sales_accounts WHERE owner = ${owner}::text AND brand_domain = ${a.brand.domain}::text
            AND operator = ${a.operator}::text AND sandbox = ${sandbox(a)}::boolean FOR UPDATE`);
          let row: AccountRow;
          let action: 'created' | 'updated' | 'unchanged';
          if (!existing) {
            row = newAccount({ ids }, owner, {
              brand_domain: a.brand.domain,
              operator: a.operator,
              billing: a.billing,
              payment_terms: a.payment_terms,
              sandbox: sandbox(a),
            });
            action = 'created';
            if (!input.dry_run) await insertAccount(tx, row, now);
          } else if (existing.billing !== a.billing || (a.payment_terms !== undefined && existing.payment_terms !== a.payment_terms)) {
            row = { ...existing, billing: a.billing, payment_terms: a.payment_terms ?? existing.payment_terms };
            action = 'updated';
            if (!input.dry_run) {
              await tx.query(sql`UPDATE sales_accounts SET billing = ${row.billing}::text, payment_terms = ${row.payment_terms}::text, updated_at = ${now}::timestamptz
                WHERE account_id = ${row.account_id}::text`);
            }
          } else {
            row = existing;
            action = 'unchanged';
          }
          const rendered: Json = { ...renderAccount(row), action };
          // A dry run creates nothing, so there is no id to report yet.
          if (input.dry_run && action === 'created') delete rendered.account_id;
          out.push(rendered);
        }
        return out;
      };
      const results = await (callTx ? sync(callTx) : deps.db.transaction(sync));
      const body: Json = { accounts: results };
      if (input.dry_run) body.dry_run = true;
      if (deps.options.sandbox) body.sandbox = true;
      return body;
    },
  });
}

/**
 * A sandbox caller that has no account yet is given the deployment's test accounts, so a buyer that
 * discovers accounts before declaring one (list_accounts first) finds one to work under.
 */
async function provisionStarterAccounts(deps: SalesDeps, owner: string): Promise<void> {
  if (!deps.options.sandbox || !deps.options.sandboxAccounts.length) return;
  const [any] = await deps.db.query(sql`SELECT 1 FROM sales_accounts WHERE owner = ${owner}::text LIMIT 1`);
  if (any) return;
  for (const a of deps.options.sandboxAccounts) {
    const row = newAccount(deps, owner, { brand_domain: a.brand.domain, operator: a.operator, billing: 'operator', sandbox: true });
    await insertAccount(deps.db, row, deps.clock.now(), true);
  }
}

export function listAccountsTask(deps: SalesDeps) {
  return defineTask({
    name: 'list_accounts',
    description: "The caller's accounts on this seller, oldest first, with cursor pagination; filter by status or sandbox.",
    protocol: 'media_buy',
    input: v.object({
      ...versionFields,
      account: v.optional(accountRef),
      status: v.optional(v.picklist(ACCOUNT_STATUSES, `must be one of ${ACCOUNT_STATUSES.join(', ')}`)),
      sandbox: v.optional(v.boolean()),
      pagination,
    }),
    async handler({ input, principal }) {
      const owner = principal.orgId;
      await provisionStarterAccounts(deps, owner);
      const limit = input.pagination?.max_results ?? 50;
      const print = fingerprint([input.status, input.sandbox, input.account]);
      const offset = decodeOffset(input.pagination?.cursor, print);
      const where = [sql`owner = ${owner}::text`];
      if (input.status) where.push(sql`status = ${input.status}::text`);
      if (input.sandbox !== undefined) where.push(sql`sandbox = ${input.sandbox}::boolean`);
      if (input.account && 'account_id' in input.account) where.push(sql`account_id = ${input.account.account_id}::text`);
      if (input.account && 'brand' in input.account)
        where.push(sql`brand_domain = ${input.account.brand.domain}::text AND operator = ${input.account.operator}::text`);
      const rows = await deps.db.query<AccountRow & { total: number }>(sql`
        SELECT *, count(*) OVER ()::int AS total FROM sales_accounts WHERE ${sql.join(where, ' AND ')}
        ORDER BY created_at, account_id LIMIT ${limit}::int OFFSET ${offset}::int`);
      const total =
        rows[0]?.total ??
        (offset ? (await deps.db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM sales_accounts WHERE ${sql.join(where, ' AND ')}`))[0]!.n : 0);
      return { accounts: rows.map(renderAccount), pagination: pageInfo(offset, rows.length, total, print) };
    },
  });
}
