import { join } from 'node:path';
import postgres from 'postgres';
import { createPostgresDatabase } from '../../plugins/storage-postgres/index.ts';
import { loadMigrations } from '../../core/migrations.ts';
import type { SqlFragment } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { DATABASE_URL, dropSchema, uniqueSchema } from './db.ts';

/**
 * The statements `issue` sends (captured, not run), each with the generic plan Postgres makes of it in a fresh
 * schema holding the tables of `plugins`: the plan a named statement may settle on after five runs, made for no
 * values in particular (the literals given to EXECUTE do not shape it). Postgres only.
 */
export async function genericPlans(
  plugins: readonly string[],
  issue: (q: Queryable) => Promise<unknown>,
): Promise<Array<{ statement: SqlFragment; plan: string }>> {
  const schema = uniqueSchema('generic plan');
  const db = createPostgresDatabase({ url: DATABASE_URL!, schema, max: 2 });
  const raw = postgres(DATABASE_URL!, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
  try {
    for (const plugin of plugins) await db.migrate(plugin, loadMigrations(join(import.meta.dir, `../../plugins/${plugin}/migrations`)));
    const seen: SqlFragment[] = [];
    await issue({
      query: async <T>(s: SqlFragment) => {
        seen.push(s);
        return [] as T[];
      },
    });
    await raw.unsafe('SET plan_cache_mode = force_generic_plan');
    const literal = (v: unknown): string => (Array.isArray(v) ? `ARRAY[${v.map(literal).join(', ')}]` : `'${String(v).replaceAll("'", "''")}'`);
    const out: Array<{ statement: SqlFragment; plan: string }> = [];
    for (const [i, statement] of seen.entries()) {
      const { text, values } = statement.build();
      await raw.unsafe(`PREPARE generic_${i} AS ${text}`);
      const rows = await raw.unsafe(`EXPLAIN EXECUTE generic_${i}(${values.map(literal).join(', ')})`);
      out.push({ statement, plan: rows.map((r) => r['QUERY PLAN'] as string).join('\n') });
    }
    return out;
  } finally {
    await raw.end();
    await db.close();
    await dropSchema('postgres', schema);
  }
}
