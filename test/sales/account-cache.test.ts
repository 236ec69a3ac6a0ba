/**
 * Accounts are resolved from a per-instance copy (plugins/sales-accounts/account-cache.ts) that
 * every change to a stored account reaches through NOTIFY (triggers, migration 003). Two instances
 * share one schema; each account is first resolved on both, so both hold it, then changed on A by
 * hand-written SQL. B must follow within one second: polled, not a speed measurement.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database, type DatabasePort } from '../../core/ports/database.ts';
import { SalesAccounts, type SalesAccountsPort } from '../../core/ports/sales-accounts.ts';
import { sql } from '../../core/sql.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import salesAccounts from '../../plugins/sales-accounts/index.ts';
import { insertAccount, newAccount } from '../../plugins/sales-accounts/store.ts';
import { AccountCache } from '../../plugins/sales-accounts/account-cache.ts';
import { defaultIds } from '../../core/ports/ids.ts';
import { deploy, forEachAdapter, type Deployed } from '../support/deploy.ts';
import { withinOneSecond } from '../support/poll.ts';

/** What resolving gives: the account's status, or the refusal's code. */
const outcome = (p: Promise<{ status: string }>) =>
  p.then(
    (a) => a.status,
    (e: { code?: string }) => e.code ?? String(e),
  );

let n = 0;
forEachAdapter('account cache', (adapter) =>
  describe(`account cache across two instances [${adapter}]`, () => {
    let a: Deployed;
    let b: Deployed;
    let accountsA: SalesAccountsPort;
    let accountsB: SalesAccountsPort;
    let dbA: DatabasePort;
    let dbB: DatabasePort;
    beforeAll(async () => {
      a = await deploy(adapter, [auth(), tasks({ worker: false }), idempotency(), salesAccounts()]);
      b = await deploy(adapter, [auth(), tasks({ worker: false }), idempotency(), salesAccounts()], { schema: a.schema! });
      [accountsA, accountsB] = [a.deployment.get(SalesAccounts), b.deployment.get(SalesAccounts)];
      [dbA, dbB] = [a.deployment.get(Database), b.deployment.get(Database)];
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    const newOwnerAccount = async () => {
      const owner = `org-${process.pid}-${n++}`;
      const row = newAccount({ ids: defaultIds }, owner, { brand_domain: `b${n}.example`, operator: 'op.example', billing: 'operator', sandbox: false });
      await insertAccount(dbA, row, new Date());
      return row;
    };
    const onBoth = (owner: string, accountId: string) =>
      Promise.all([outcome(accountsA.resolve(dbA, owner, { account_id: accountId })), outcome(accountsB.resolve(dbB, owner, { account_id: accountId }))]);

    test('an account is answered from the copy: a change made without announcing it is not seen, except in a transaction', async () => {
      const acc = await newOwnerAccount();
      expect(await onBoth(acc.owner, acc.account_id)).toEqual(['active', 'active']);
      // Triggers off for this transaction (superuser): the suspension is silent.
      await dbA.transaction(async (tx) => {
        await tx.query(sql`SET LOCAL session_replication_role = replica`);
        await tx.query(sql`UPDATE sales_accounts SET status = 'suspended' WHERE account_id = ${acc.account_id}::text`);
      });
      expect(await outcome(accountsB.resolve(dbB, acc.owner, { account_id: acc.account_id }))).toBe('active');
      // A transaction (a write) reads the row itself.
      expect(await outcome(dbB.transaction((tx) => accountsB.resolve(tx, acc.owner, { account_id: acc.account_id })))).toBe('ACCOUNT_SUSPENDED');
    });

    test('an account suspended on A is refused on B within one second, by id and by brand and operator', async () => {
      const acc = await newOwnerAccount();
      const byKey = { brand: { domain: acc.brand_domain }, operator: acc.operator };
      expect(await onBoth(acc.owner, acc.account_id)).toEqual(['active', 'active']);
      expect(await outcome(accountsB.resolve(dbB, acc.owner, byKey))).toBe('active');
      await dbA.query(sql`UPDATE sales_accounts SET status = 'suspended' WHERE account_id = ${acc.account_id}::text`);
      expect(await withinOneSecond(async () => (await onBoth(acc.owner, acc.account_id)).every((s) => s === 'ACCOUNT_SUSPENDED'))).toBe(true);
      expect(await outcome(accountsB.resolve(dbB, acc.owner, byKey))).toBe('ACCOUNT_SUSPENDED');
    });

    test("another organization naming a held account's id is refused, as the database would", async () => {
      const acc = await newOwnerAccount();
      expect(await onBoth(acc.owner, acc.account_id)).toEqual(['active', 'active']);
      expect(await onBoth('someone-else', acc.account_id)).toEqual(['ACCOUNT_NOT_FOUND', 'ACCOUNT_NOT_FOUND']);
      expect(await accountsB.find(dbB, 'someone-else', { account_id: acc.account_id })).toBeUndefined();
    });

    test('an account created on A is found on B at once, even though B just refused it (a missing account is never kept)', async () => {
      const owner = `org-${process.pid}-${n++}`;
      const row = newAccount({ ids: defaultIds }, owner, { brand_domain: 'late.example', operator: 'op.example', billing: 'operator', sandbox: false });
      expect(await onBoth(owner, row.account_id)).toEqual(['ACCOUNT_NOT_FOUND', 'ACCOUNT_NOT_FOUND']);
      await insertAccount(dbA, row, new Date());
      expect(await onBoth(owner, row.account_id)).toEqual(['active', 'active']);
    });

    test('emptying the table (TRUNCATE) drops every held account on both', async () => {
      const acc = await newOwnerAccount();
      expect(await onBoth(acc.owner, acc.account_id)).toEqual(['active', 'active']);
      await dbA.query(sql`TRUNCATE sales_accounts CASCADE`);
      expect(await withinOneSecond(async () => (await onBoth(acc.owner, acc.account_id)).every((s) => s === 'ACCOUNT_NOT_FOUND'))).toBe(true);
    });
  }),
);

describe('account cache, without a database', () => {
  const row = {
    account_id: 'acc_1',
    owner: 'o1',
    brand_domain: 'b.example',
    operator: 'op.example',
    billing: 'operator',
    payment_terms: null,
    credit_limit: null,
    sandbox: false,
    status: 'active',
    name: 'n',
  };

  test('a read overlapping a change is answered but not kept', async () => {
    const cache = new AccountCache();
    const { promise, resolve } = Promise.withResolvers<typeof row>();
    const slow = cache.load(() => promise);
    cache.invalidate('acc_1');
    resolve(row);
    expect(await slow).toEqual(row);
    expect(cache.get('acc_1')).toBeUndefined();
    await cache.load(async () => row);
    expect(cache.get('acc_1')).toEqual(row);
  });

  test("a change drops the account it names, by id and by natural key; '*' drops everything", async () => {
    const cache = new AccountCache();
    const other = { ...row, account_id: 'acc_2', brand_domain: 'c.example' };
    await cache.load(async () => [row, other]);
    const key = AccountCache.naturalKey('o1', 'b.example', 'op.example', false);
    expect(cache.find(key)).toEqual(row);
    cache.invalidate('acc_1');
    expect([cache.get('acc_1'), cache.find(key), cache.get('acc_2')]).toEqual([undefined, undefined, other]);
    cache.invalidate('*');
    expect(cache.get('acc_2')).toBeUndefined();
  });

  test("an account this instance is changing is not kept until the change is announced, nor past a rolled-back change's hold", async () => {
    let now = 0;
    const cache = new AccountCache(100, 60_000, 5_000, () => now);
    await cache.load(async () => row);
    cache.changing('acc_1');
    expect(cache.get('acc_1')).toBeUndefined();
    // A read between the change's commit and its announcement (or one before the commit) is answered, not kept.
    await cache.load(async () => row);
    expect(cache.get('acc_1')).toBeUndefined();
    cache.invalidate('acc_1');
    await cache.load(async () => ({ ...row, status: 'suspended' }));
    expect(cache.get('acc_1')?.status).toBe('suspended');
    // A change that rolled back is never announced: the hold ends on its own.
    cache.changing('acc_1');
    now += 5_001;
    await cache.load(async () => row);
    expect(cache.get('acc_1')).toEqual(row);
  });

  test('a natural key whose account was read again under another key leads nowhere', async () => {
    const cache = new AccountCache();
    await cache.load(async () => row);
    await cache.load(async () => ({ ...row, brand_domain: 'renamed.example' }));
    expect(cache.find(AccountCache.naturalKey('o1', 'b.example', 'op.example', false))).toBeUndefined();
    expect(cache.find(AccountCache.naturalKey('o1', 'renamed.example', 'op.example', false))?.brand_domain).toBe('renamed.example');
  });
});
