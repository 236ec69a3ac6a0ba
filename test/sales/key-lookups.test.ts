import { expect, test } from 'bun:test';
import { formatKeys } from '../../plugins/sales-creatives/library.ts';
import { creativePackages } from '../../plugins/sales/buys/assignments.ts';
import { describePostgres } from '../support/db.ts';
import { genericPlans } from '../support/generic-plan.ts';

// Lookups of an account's creatives (and their assignments) by a list of ids. A named statement settles on a
// generic plan after five runs; for `account_id = $1 AND creative_id = ANY($2)` made while the account had few
// rows, that plan used the key for account_id alone and filtered creative_id, reading the whole library
// (20,001 rows for one id in a probe). Each id is looked up by the whole key instead, whatever the plan.
describePostgres('creative key lookups', () => {
  test('as generic plans, the library and assignment lookups use both key columns, and list each creative once', async () => {
    const planned = await genericPlans(['sales-accounts', 'sales-creatives', 'sales'], async (q) => {
      await formatKeys(q, 'acc-1', ['cr-a', 'cr-b', 'cr-a']);
      await creativePackages.assignmentsOf(q, 'acc-1', ['cr-a', 'cr-a']);
    });
    expect(planned).toHaveLength(2);
    for (const [i, { statement, plan }] of planned.entries()) {
      // Each id once: a repeated id does not repeat its rows.
      expect(statement.build().values.find(Array.isArray)).toEqual(i === 0 ? ['cr-a', 'cr-b'] : ['cr-a']);
      expect(plan).toMatch(/Index (Only )?Scan .*\n.*Index Cond: \(\(account_id = \$\d\) AND \(creative_id = k\.id\)\)/);
      expect(plan).not.toContain('Filter');
    }
  });
});
