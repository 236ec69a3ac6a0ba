import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { clientFor } from '../support/agent.ts';
import { plan, startGovernanceServer, TOKEN, type GovernanceServer } from './fixture.ts';

// sync_plans writes its plans and keeps its answer for replays in one transaction (one commit per
// call): concurrent duplicates still write once, and the key answers nothing else.
forEachDatabase<GovernanceServer>(
  'sync_plans replays',
  (adapter, schema) => startGovernanceServer(adapter, schema),
  (g) => g.server.close(),
  (get) => {
    test('concurrent duplicates under one key write the plan once and replay that answer; the key with another plan is IDEMPOTENCY_CONFLICT', async () => {
      const c = await clientFor('rest', get().server, TOKEN);
      const args = { idempotency_key: 'plans-dupes-0000000001', plans: [plan('dupes')] };
      const calls = await Promise.all(Array.from({ length: 6 }, () => c.call('sync_plans', args)));
      expect(calls.every((r) => r.ok)).toBe(true);
      expect(calls.filter((r) => !r.body.replayed)).toHaveLength(1);
      const first = calls.find((r) => !r.body.replayed)!.body;
      expect(first.plans.map((p: { plan_id: string; version: number }) => [p.plan_id, p.version])).toEqual([['dupes', 1]]);
      for (const r of calls) expect({ ...r.body, replayed: undefined }).toEqual({ ...first, replayed: undefined });
      const other = await c.call('sync_plans', { ...args, plans: [plan('dupes-other')] });
      expect(other.body.code).toBe('IDEMPOTENCY_CONFLICT');
      // Written once: the same plan under a new key is unchanged (still version 1). The refused call wrote
      // nothing: its plan, changed under a new key, is new (version 1, not 2).
      const again = await c.call('sync_plans', { idempotency_key: 'plans-dupes-0000000002', plans: [plan('dupes')] });
      expect(again.body.plans[0].version).toBe(1);
      const refused = await c.call('sync_plans', { idempotency_key: 'plans-dupes-0000000003', plans: [plan('dupes-other', { objectives: 'Changed' })] });
      expect(refused.body.plans[0].version).toBe(1);
      await c.close();
    });

    test('a plan changed under a new key moves to the next version', async () => {
      const c = await clientFor('rest', get().server, TOKEN);
      expect((await c.call('sync_plans', { idempotency_key: 'plans-version-0000000001', plans: [plan('versioned')] })).body.plans[0].version).toBe(1);
      const changed = await c.call('sync_plans', {
        idempotency_key: 'plans-version-0000000002',
        plans: [plan('versioned', { objectives: 'Changed objectives' })],
      });
      expect(changed.body.plans[0].version).toBe(2);
      await c.close();
    });
  },
);
