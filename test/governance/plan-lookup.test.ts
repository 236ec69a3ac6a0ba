import { expect, test } from 'bun:test';
import { loadPlans } from '../../plugins/governance/store.ts';
import { describePostgres } from '../support/db.ts';
import { genericPlans } from '../support/generic-plan.ts';

// sync_plans locks the plans it names (loadPlans). A named statement settles on a generic plan after five
// runs, and a generic plan of `plan_id = ANY($2)` made while the owner had few plans reads every plan of the
// owner (index on owner, plan_id filtered): sync_plans slowed with each plan (the table bench: 387/s, 0.30x).
// One plan is looked up by its whole key, which any plan of the statement uses; several are planned per run.
describePostgres('governance plan lookup', () => {
  test('the lookup of one plan, as a generic plan, is by the whole key; of several, planned with each run', async () => {
    const [one, several] = await genericPlans(['governance'], async (q) => {
      await loadPlans(q, 'org-1', ['plan-a'], true);
      await loadPlans(q, 'org-1', ['plan-a', 'plan-b'], true);
    });
    expect([one!.statement.planEachRun, several!.statement.planEachRun]).toEqual([false, true]);
    expect(one!.statement.build().values).toEqual(['org-1', 'plan-a']);
    expect(one!.plan).toContain('Index Cond: ((owner = $1) AND (plan_id = $2))');
    expect(one!.plan).not.toContain('Filter');
  });
});
