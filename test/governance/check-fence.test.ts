import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadMigrations } from '../../core/migrations.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import { defaultIds } from '../../core/ports/ids.ts';
import { createGovernanceService } from '../../plugins/governance/service.ts';
import { savePlan } from '../../plugins/governance/store.ts';
import type { Plan } from '../../plugins/governance/plan-schema.ts';
import { forEachDatabase, openDatabase } from '../support/db.ts';
import { plan, proposal, T0 } from './fixture.ts';

/**
 * check_governance records a check judged by the plan an instance read earlier only if the plan row
 * and its committed budget are unchanged (one fenced insert); otherwise it reads the plan again.
 * Two services on one database stand for two instances: a change made through one is judged by at
 * once through the other.
 */
forEachDatabase<DatabasePort>(
  'governance check fence',
  async (adapter, schema) => {
    const db = await openDatabase(adapter, schema, 4);
    await db.migrate('governance', loadMigrations(join(import.meta.dir, '../../plugins/governance/migrations')));
    return db;
  },
  (db) => db.close(),
  (get) => {
    test('a plan changed or budget committed through another instance is judged by at once', async () => {
      const db = get();
      const clock = new ManualClock(T0);
      const deps = { db, clock, ids: defaultIds, mode: 'enforce' as const, checkTtlSeconds: 3600 };
      const a = createGovernanceService(deps);
      const b = createGovernanceService(deps);
      const owner = 'org-fence';
      const created = plan('fence') as unknown as Plan;
      await db.transaction((tx) => savePlan(tx, owner, created, undefined, T0));

      // A reads (and keeps) version 1: 5,000 fits the 10,000 budget and the 60% per seller.
      expect((await a.check(owner, proposal('fence', 5000))).status).toBe('approved');
      expect((await a.check(owner, proposal('fence', 5000))).status).toBe('approved');

      // The budget drops to 4,000 (version 2): A's next check is judged by it.
      const smaller = plan('fence', { budget: { total: 4000, currency: 'USD', reallocation_unlimited: true } }) as unknown as Plan;
      await db.transaction((tx) => savePlan(tx, owner, smaller, { owner, plan_id: 'fence', version: 1, status: 'active', plan: created }, T0));
      expect((await a.check(owner, proposal('fence', 5000))).status).toBe('denied');

      // B commits 3,000 of it: A's next check sees 1,000 left.
      const approved = await b.check(owner, proposal('fence', 3000));
      expect(approved.status).toBe('approved');
      await b.reportOutcome(owner, {
        plan_id: 'fence',
        check_id: approved.check_id,
        outcome: 'completed',
        governance_context: approved.governance_context!,
        committed_budget: 3000,
      });
      expect((await a.check(owner, proposal('fence', 2000))).status).toBe('denied');
      expect((await a.check(owner, proposal('fence', 1000))).status).toBe('approved');

      // Every check was recorded once, with the version it was judged by.
      const rows = await db.query<{ plan_version: number; status: string }>({
        build: () => ({ text: `SELECT plan_version, status FROM governance_checks WHERE owner = 'org-fence' ORDER BY plan_version, status`, values: [] }),
      } as never);
      expect(rows.map((r) => [Number(r.plan_version), r.status])).toEqual([
        [1, 'approved'],
        [1, 'approved'],
        [2, 'approved'],
        [2, 'approved'],
        [2, 'denied'],
        [2, 'denied'],
      ]);
    });

    test('an unknown plan is not found, and found once created', async () => {
      const db = get();
      const deps = { db, clock: new ManualClock(T0), ids: defaultIds, mode: 'enforce' as const, checkTtlSeconds: 3600 };
      const a = createGovernanceService(deps);
      await expect(a.check('org-late', proposal('late', 100))).rejects.toMatchObject({ code: 'PLAN_NOT_FOUND' });
      await db.transaction((tx) => savePlan(tx, 'org-late', plan('late') as unknown as Plan, undefined, T0));
      expect((await a.check('org-late', proposal('late', 100))).status).toBe('approved');
    });
  },
);
