import { expect, test } from 'bun:test';
import { join } from 'node:path';
import postgres from 'postgres';
import { createPostgresDatabase } from '../../plugins/storage-postgres/index.ts';
import { loadMigrations } from '../../core/migrations.ts';
import type { SqlFragment } from '../../core/sql.ts';
import { loadPlans } from '../../plugins/governance/store.ts';
import { DATABASE_URL, describePostgres, dropSchema, uniqueSchema } from '../support/db.ts';

// sync_plans locks the plans it names (loadPlans). A named statement settles on a generic plan after five
// runs, and a generic plan of `plan_id = ANY($2)` made while the owner had few plans reads every plan of the
// owner (index on owner, plan_id filtered): sync_plans slowed with each plan (the table bench: 387/s, 0.30x).
// One plan is looked up by its whole key, which any plan of the statement uses; several are planned per run.
describePostgres('governance plan lookup', () => {
  test('the lookup of one plan, as a generic plan, is by the whole key; of several, planned with each run', async () => {
    const schema = uniqueSchema('plan lookup');
    const db = createPostgresDatabase({ url: DATABASE_URL!, schema, max: 2 });
    const raw = postgres(DATABASE_URL!, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
    try {
      await db.migrate('governance', loadMigrations(join(import.meta.dir, '../../plugins/governance/migrations')));
      const seen: SqlFragment[] = [];
      const capture = {
        query: async <T>(s: SqlFragment) => {
          seen.push(s);
          return [] as T[];
        },
      };
      await loadPlans(capture, 'org-1', ['plan-a'], true);
      await loadPlans(capture, 'org-1', ['plan-a', 'plan-b'], true);
      const [one, several] = seen as [SqlFragment, SqlFragment];
      expect([one.planEachRun, several.planEachRun]).toEqual([false, true]);

      const { text, values } = one.build();
      await raw.unsafe('SET plan_cache_mode = force_generic_plan');
      await raw.unsafe(`PREPARE one_plan AS ${text}`);
      // A generic plan is made for no values in particular: the literals given to EXECUTE do not shape it.
      expect(values).toEqual(['org-1', 'plan-a']);
      const plan = (await raw.unsafe(`EXPLAIN EXECUTE one_plan('org-1', 'plan-a')`)).map((r) => r['QUERY PLAN'] as string).join('\n');
      expect(plan).toContain('Index Cond: ((owner = $1) AND (plan_id = $2))');
      expect(plan).not.toContain('Filter');
    } finally {
      await raw.end();
      await db.close();
      await dropSchema('postgres', schema);
    }
  });
});
