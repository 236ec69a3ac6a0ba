import { expect, test } from 'bun:test';
import { createPostgresDatabase } from '../../plugins/storage-postgres/index.ts';
import { createPostgresSearch } from '../../plugins/search-postgres/index.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { sql } from '../../core/sql.ts';
import { join } from 'node:path';
import { DATABASE_URL, describePostgres } from '../support/db.ts';

// A named prepared statement may settle on a generic plan after five runs; a statement marked
// planEachRun goes out unnamed every time, so Postgres plans it with that run's values.
describePostgres('Postgres plan per run', () => {
  // One connection: pg_prepared_statements lists the statements of the session that asks.
  const kept = async (db: ReturnType<typeof createPostgresDatabase>, like: string) =>
    (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE ${like}::text`))[0]!.n;

  test('a statement marked planEachRun is never kept prepared; the same statement unmarked is', async () => {
    const db = createPostgresDatabase({ url: DATABASE_URL!, max: 1 });
    try {
      for (let i = 0; i < 8; i++) {
        expect(await db.query<{ n: number }>(sql.planEachRun(sql`SELECT ${i}::int AS n /* per-run */`))).toEqual([{ n: i }]);
        await db.query(sql`SELECT ${i}::int AS n /* cached */`);
      }
      expect(await kept(db, '%per-run%')).toBe(0);
      expect(await kept(db, '%cached%')).toBe(1);
      // Marking makes a copy: the fragment it was given is planned as before.
      const plain = sql`SELECT 1`;
      expect([sql.planEachRun(plain).planEachRun, plain.planEachRun]).toEqual([true, false]);
      expect(sql.planEachRun(plain).build()).toEqual(plain.build());
    } finally {
      await db.close();
    }
  });

  test("the registry's agent search is planned per run (its best plan depends on the filter values)", async () => {
    const schema = `plan_each_run_${process.pid}`;
    const db = createPostgresDatabase({ url: DATABASE_URL!, max: 1, schema });
    try {
      await db.migrate('search-postgres', loadMigrations(join(import.meta.dir, '../../plugins/search-postgres/migrations')));
      const search = createPostgresSearch(db);
      const viewer = { member: true, orgId: '00000000-0000-8000-a000-000000000000' };
      for (let i = 0; i < 8; i++) await search.search({ filters: { channels: ['display'], markets: ['US'] }, limit: 10, viewer });
      expect(await kept(db, '%search_agent_profiles%')).toBe(0);
    } finally {
      await db.query(sql`DROP SCHEMA ${sql.raw(`"${schema}"`)} CASCADE`);
      await db.close();
    }
  });
});
