import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { startSalesWorld, type SalesWorld } from './fixture.ts';

// sync_accounts creates a new account in one statement (INSERT ... ON CONFLICT DO NOTHING) and reads,
// locks and compares only one already there: the answers are those of reading first.
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
  },
);
