import { expect, test } from 'bun:test';
import { join } from 'node:path';
import postgres from 'postgres';
import { createPostgresDatabase } from '../../plugins/storage-postgres/index.ts';
import { loadMigrations } from '../../core/migrations.ts';
import type { SqlFragment } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { formatKeys } from '../../plugins/sales-creatives/library.ts';
import { creativePackages } from '../../plugins/sales/buys/assignments.ts';
import { DATABASE_URL, describePostgres, dropSchema, uniqueSchema } from '../support/db.ts';

// Lookups of an account's creatives (and their assignments) by a list of ids. A named statement settles on a
// generic plan after five runs; for `account_id = $1 AND creative_id = ANY($2)` made while the account had few
// rows, that plan used the key for account_id alone and filtered creative_id, reading the whole library
// (20,001 rows for one id in a probe). Each id is looked up by the whole key instead, whatever the plan.
describePostgres('creative key lookups', () => {
  test('as generic plans, the library and assignment lookups use both key columns, and list each creative once', async () => {
    const schema = uniqueSchema('key lookups');
    const db = createPostgresDatabase({ url: DATABASE_URL!, schema, max: 2 });
    const raw = postgres(DATABASE_URL!, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
    try {
      for (const plugin of ['sales-accounts', 'sales-creatives', 'sales'])
        await db.migrate(plugin, loadMigrations(join(import.meta.dir, `../../plugins/${plugin}/migrations`)));
      const seen: SqlFragment[] = [];
      const capture: Queryable = {
        query: async <T>(s: SqlFragment) => {
          seen.push(s);
          return [] as T[];
        },
      };
      await formatKeys(capture, 'acc-1', ['cr-a', 'cr-b', 'cr-a']);
      await creativePackages.assignmentsOf(capture, 'acc-1', ['cr-a', 'cr-a']);
      await raw.unsafe('SET plan_cache_mode = force_generic_plan');
      for (const [i, statement] of seen.entries()) {
        const { text, values } = statement.build();
        // Each id once: a repeated id does not repeat its rows.
        expect(values.find(Array.isArray)).toEqual(i === 0 ? ['cr-a', 'cr-b'] : ['cr-a']);
        await raw.unsafe(`PREPARE lookup_${i} AS ${text}`);
        // A generic plan is made for no values in particular: the literals given to EXECUTE do not shape it.
        const args = values.map((v) => (Array.isArray(v) ? `ARRAY['cr-a']` : `'acc-1'`)).join(', ');
        const plan = (await raw.unsafe(`EXPLAIN EXECUTE lookup_${i}(${args})`)).map((r) => r['QUERY PLAN'] as string).join('\n');
        expect(plan).toMatch(/Index (Only )?Scan .*\n.*Index Cond: \(\(account_id = \$\d\) AND \(creative_id = k\.id\)\)/);
        expect(plan).not.toContain('Filter');
      }
    } finally {
      await raw.end();
      await db.close();
      await dropSchema('postgres', schema);
    }
  });
});
