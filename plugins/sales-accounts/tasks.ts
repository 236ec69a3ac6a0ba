import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, keptWithin, type Json } from '../../core/task.ts';
import { isUniqueViolation, type Queryable } from '../../core/ports/database.ts';
import { accountRef, brandRef, domain, pagination, versionFields } from '../../lib/adcp/request-fields.ts';
import { decodeOffset, fingerprint, pageInfo } from '../../lib/adcp/query-cursor.ts';
import { BatchedRead, byWish, wishRows } from '../../lib/batched-read.ts';
import { BoundedSet } from '../../lib/bounded-set.ts';
import { PAYMENT_TERMS } from './terms.ts';
import { AccountCache } from './account-cache.ts';
import { insertAccount, isSandbox, newAccount, renderAccount, type AccountRow, type AccountsDeps } from './store.ts';

const ACCOUNT_STATUSES = ['active', 'pending_approval', 'rejected', 'payment_required', 'suspended', 'closed'] as const;

const accountInput = v.object({
  brand: brandRef,
  operator: domain,
  billing: v.picklist(['operator', 'agent', 'advertiser'], 'must be operator, agent or advertiser'),
  payment_terms: v.optional(v.picklist(PAYMENT_TERMS, `must be one of ${PAYMENT_TERMS.join(', ')}`)),
  sandbox: v.optional(v.boolean()),
});

/** Natural keys of accounts seen to exist, at most this many (then all forgotten): their sync reads first. */
const KNOWN_MAX = 10_000;

export function syncAccountsTask(deps: AccountsDeps) {
  // Accounts are never removed, nor their natural key changed: one seen to exist always does (a forgotten one
  // only costs its next sync a failed first attempt).
  const seen = new BoundedSet(KNOWN_MAX);
  return defineTask({
    name: 'sync_accounts',
    description:
      'Create or update the buyer accounts (brand + operator + billing) this caller buys under; idempotent. Returns each account with its action and status.',
    protocol: 'media_buy',
    // The creative library is per account (sales-creatives), and the creative agent's mounts serve it: its accounts too.
    servedWith: ['creative'],
    mutating: true,
    // Database only, in a transaction of its own: the accounts commit with the idempotency record (keepWithin).
    recordsKeyWithin: true,
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
    async handler({ input, principal, clock, ids, idempotency }) {
      if (input.delete_missing)
        throw new ProtocolError('UNSUPPORTED_FEATURE', 'delete_missing is not supported: close accounts with the seller', { field: 'delete_missing' });
      const owner = principal.orgId;
      const now = clock.now();
      const sandbox = (a: { sandbox?: boolean }) => isSandbox(deps, a.sandbox);
      const fresh = input.accounts.map((a) =>
        newAccount({ ids }, owner, {
          brand_domain: a.brand.domain,
          operator: a.operator,
          billing: a.billing,
          payment_terms: a.payment_terms,
          sandbox: sandbox(a),
        }),
      );
      const keys = fresh.map((f) => AccountCache.naturalKey(owner, f.brand_domain, f.operator, f.sandbox));
      const known = (key: string) => seen.has(key) || !!deps.cache?.find(key);
      const answer = (results: Json[]): Json => {
        const body: Json = { accounts: results };
        if (input.dry_run) body.dry_run = true;
        if (deps.options.sandbox) body.sandbox = true;
        return body;
      };
      // Accounts none of which this instance knows to exist: created, each in one INSERT that a taken natural key fails.
      // The answer is known before they run, so they, the idempotency record and COMMIT go in one round trip;
      // should one exist after all (or the key be taken), the transaction rolls back and the call runs again, reading first.
      if (!input.dry_run && !keys.some(known)) {
        try {
          const created = await deps.db.transaction(async (tx) => {
            for (const row of fresh) insertAccount(tx, row, now).catch(() => {});
            return keptWithin(idempotency, tx, answer(fresh.map((row) => ({ ...renderAccount(row), action: 'created' }))));
          });
          seen.add(keys);
          return created;
        } catch (error) {
          if (!isUniqueViolation(error)) throw error;
        }
      }
      const sync = async (tx: Queryable) => {
        const out: Json[] = [];
        for (const [i, a] of input.accounts.entries()) {
          const row0 = fresh[i]!;
          // A new account is created in one statement; one already there (accounts are never removed, nor
          // their natural key changed: known here means it exists) is read and locked to compare.
          if (!input.dry_run && !known(keys[i]!) && (await insertAccount(tx, row0, now, true))) {
            out.push({ ...renderAccount(row0), action: 'created' });
            continue;
          }
          const [existingRow] =
            await tx.query<AccountRow>(sql`SELECT * FROM sales_accounts WHERE owner = ${owner}::text AND brand_domain = ${a.brand.domain}::text
            AND operator = ${a.operator}::text AND sandbox = ${sandbox(a)}::boolean FOR NO KEY UPDATE`);
          let row: AccountRow;
          let action: 'created' | 'updated' | 'unchanged';
          if (!existingRow) {
            row = row0;
            action = 'created';
            if (!input.dry_run) await insertAccount(tx, row, now);
          } else if (existingRow.billing !== a.billing || (a.payment_terms !== undefined && existingRow.payment_terms !== a.payment_terms)) {
            seen.add([keys[i]!]);
            row = { ...existingRow, billing: a.billing, payment_terms: a.payment_terms ?? existingRow.payment_terms };
            action = 'updated';
            if (!input.dry_run) {
              deps.cache?.changing(row.account_id);
              await tx.query(sql`UPDATE sales_accounts SET billing = ${row.billing}::text, payment_terms = ${row.payment_terms}::text, updated_at = ${now}::timestamptz
                WHERE account_id = ${row.account_id}::text`);
            }
          } else {
            seen.add([keys[i]!]);
            row = existingRow;
            action = 'unchanged';
          }
          const rendered: Json = { ...renderAccount(row), action };
          // A dry run creates nothing, so there is no id to report yet.
          if (input.dry_run && action === 'created') delete rendered.account_id;
          out.push(rendered);
        }
        return out;
      };
      return deps.db.transaction(async (tx) => keptWithin(idempotency, tx, answer(await sync(tx))));
    },
  });
}

/**
 * A sandbox caller that has no account yet is given the deployment's test accounts, so a buyer that
 * discovers accounts before declaring one (list_accounts first) finds one to work under.
 */
async function provisionStarterAccounts(deps: AccountsDeps, owner: string): Promise<void> {
  if (!deps.options.sandbox || !deps.options.sandboxAccounts.length) return;
  const [any] = await deps.db.query(sql`SELECT 1 FROM sales_accounts WHERE owner = ${owner}::text LIMIT 1`);
  if (any) return;
  for (const a of deps.options.sandboxAccounts) {
    const row = newAccount(deps, owner, { brand_domain: a.brand.domain, operator: a.operator, billing: 'operator', sandbox: true });
    await insertAccount(deps.db, row, deps.clock.now(), true);
  }
}

/** A list_accounts page the batched statement reads: the caller, its filters (null: none) and the page. */
interface PageWish {
  owner: string;
  status: string | null;
  sandbox: boolean | null;
  account_id: string | null;
  brand_domain: string | null;
  operator: string | null;
  limit: number;
  offset: number;
}
/** The filters of a shape, on the wish `r` (names of PageWish). */
const FILTERS = {
  status: sql`a.status = r.status`,
  sandbox: sql`a.sandbox = r.sandbox`,
  account_id: sql`a.account_id = r.account_id`,
  brand: sql`a.brand_domain = r.brand_domain AND a.operator = r.operator`,
};
type Filter = keyof typeof FILTERS;

/** Pages of every caller listing at once, one statement per round and filter shape (BatchedRead). */
function accountPages(deps: AccountsDeps) {
  return new BatchedRead<PageWish, Array<AccountRow & { total: number }>>(async (shape, wishes) => {
    const where = shape ? shape.split(',').map((f) => FILTERS[f as Filter]) : [];
    const rows = await deps.db.query<AccountRow & { total: number; i: number }>(sql`
      SELECT a.* FROM ${wishRows(wishes, 'owner text, status text, sandbox boolean, account_id text, brand_domain text, operator text, "limit" int, "offset" int')}
      CROSS JOIN LATERAL (
        SELECT r.i, *, count(*) OVER ()::int AS total FROM sales_accounts a WHERE ${sql.join([sql`a.owner = r.owner`, ...where], ' AND ')}
        ORDER BY a.created_at, a.account_id LIMIT r."limit" OFFSET r."offset") a
      ORDER BY a.i, a.created_at, a.account_id`);
    return byWish(rows, wishes.length);
  });
}

export function listAccountsTask(deps: AccountsDeps) {
  const pages = accountPages(deps);
  return defineTask({
    name: 'list_accounts',
    description: "The caller's accounts on this agent, oldest first, with cursor pagination; filter by status or sandbox.",
    protocol: 'media_buy',
    servedWith: ['creative'],
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
      const byId = input.account && 'account_id' in input.account ? input.account : undefined;
      const byBrand = input.account && 'brand' in input.account ? input.account : undefined;
      const shape: Filter[] = [];
      if (input.status) shape.push('status');
      if (input.sandbox !== undefined) shape.push('sandbox');
      if (byId) shape.push('account_id');
      if (byBrand) shape.push('brand');
      const wish: PageWish = {
        owner,
        status: input.status ?? null,
        sandbox: input.sandbox ?? null,
        account_id: byId?.account_id ?? null,
        brand_domain: byBrand?.brand.domain ?? null,
        operator: byBrand?.operator ?? null,
        limit,
        offset,
      };
      const rows = await pages.read(shape.join(','), wish);
      // A page past the end (a stale cursor) counts the matches on the first page.
      const total = rows[0]?.total ?? (offset ? ((await pages.read(shape.join(','), { ...wish, limit: 1, offset: 0 }))[0]?.total ?? 0) : 0);
      return { accounts: rows.map(renderAccount), pagination: pageInfo(offset, rows.length, total, print) };
    },
  });
}
