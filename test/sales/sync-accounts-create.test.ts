import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { startSalesWorld, type SalesWorld } from './fixture.ts';

// sync_accounts creates accounts new to the instance with the idempotency record in one round trip (an
// INSERT a taken natural key fails: the call then runs again reading first), and reads, locks and compares
// one already there: the answers are those of reading first.
forEachDatabase<SalesWorld>(
  'sync_accounts create',
  (adapter, schema) => startSalesWorld(adapter, schema),
  (w) => w.close(),
  (get) => {
    const account = (billing: string, extra: Record<string, unknown> = {}) => ({
      brand: { domain: 'create-once.example' },
      operator: 'create-once.example',
      billing,
      ...extra,
    });

    test('created, then unchanged, then updated; a dry run of a new one creates nothing', async () => {
      const c = await get().client('rest');
      const dry = await c.call('sync_accounts', { idempotency_key: 'create-once-dry-000001', dry_run: true, accounts: [account('operator')] });
      expect(dry.body.accounts[0].action).toBe('created');
      expect(dry.body.accounts[0].account_id).toBeUndefined();
      const first = await c.call('sync_accounts', { idempotency_key: 'create-once-first-00001', accounts: [account('operator')] });
      expect(first.body.accounts[0].action).toBe('created');
      const again = await c.call('sync_accounts', { idempotency_key: 'create-once-again-00001', accounts: [account('operator')] });
      expect(again.body.accounts[0]).toEqual({ ...first.body.accounts[0], action: 'unchanged' });
      const changed = await c.call('sync_accounts', { idempotency_key: 'create-once-change-0001', accounts: [account('agent')] });
      expect(changed.body.accounts[0]).toMatchObject({ account_id: first.body.accounts[0].account_id, billing: 'agent', action: 'updated' });
      const dryAgain = await c.call('sync_accounts', { idempotency_key: 'create-once-dry-000002', dry_run: true, accounts: [account('agent')] });
      expect(dryAgain.body.accounts[0]).toMatchObject({ account_id: first.body.accounts[0].account_id, action: 'unchanged' });
    });

    test('concurrent syncs of one new account: one creates it, the others find it', async () => {
      const c = await get().client('rest');
      const calls = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          c.call('sync_accounts', {
            idempotency_key: `create-race-${String(i).padStart(10, '0')}`,
            accounts: [{ brand: { domain: 'race.example' }, operator: 'race.example', billing: 'operator' }],
          }),
        ),
      );
      expect(calls.every((r) => r.ok)).toBe(true);
      expect(new Set(calls.map((r) => r.body.accounts[0].account_id)).size).toBe(1);
      expect(calls.map((r) => r.body.accounts[0].action).sort()).toEqual(['created', 'unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged']);
    });

    test('concurrent duplicates of a new account under one key create it once and replay that answer; the key with another account is IDEMPOTENCY_CONFLICT', async () => {
      const c = await get().client('rest');
      const args = {
        idempotency_key: 'create-dupes-0000000001',
        accounts: [{ brand: { domain: 'dupes.example' }, operator: 'dupes.example', billing: 'operator' }],
      };
      const calls = await Promise.all(Array.from({ length: 6 }, () => c.call('sync_accounts', args)));
      expect(calls.every((r) => r.ok)).toBe(true);
      expect(calls.filter((r) => !r.body.replayed)).toHaveLength(1);
      const first = calls.find((r) => !r.body.replayed)!.body;
      expect(first.accounts[0].action).toBe('created');
      for (const r of calls) expect({ ...r.body, replayed: undefined }).toEqual({ ...first, replayed: undefined });
      const other = await c.call('sync_accounts', { ...args, accounts: [{ ...args.accounts[0], brand: { domain: 'dupes-other.example' } }] });
      expect(other.body.code).toBe('IDEMPOTENCY_CONFLICT');
      const listed = await c.call('list_accounts', {});
      expect(
        listed.body.accounts.filter((a: { brand: { domain: string } }) => a.brand.domain.startsWith('dupes')).map((a: { account_id: string }) => a.account_id),
      ).toEqual([first.accounts[0].account_id]);
    });

    test('a batch naming an account that exists and a new one: the existing one is unchanged, the new one created, once', async () => {
      const c = await get().client('rest');
      const old = { brand: { domain: 'batch-old.example' }, operator: 'batch-old.example', billing: 'operator' };
      const made = await c.call('sync_accounts', { idempotency_key: 'create-batch-0000000001', accounts: [old] });
      const both = await c.call('sync_accounts', {
        idempotency_key: 'create-batch-0000000002',
        accounts: [{ brand: { domain: 'batch-new.example' }, operator: 'batch-new.example', billing: 'operator' }, old],
      });
      expect(both.body.accounts.map((a: { action: string }) => a.action)).toEqual(['created', 'unchanged']);
      expect(both.body.accounts[1]).toEqual({ ...made.body.accounts[0], action: 'unchanged' });
    });
  },
);
