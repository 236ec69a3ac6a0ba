import postgres from 'postgres';
import * as v from 'valibot';
import { definePlugin } from '../../core/plugin.ts';
import { Database, type DatabasePort, type Queryable, type Migration } from '../../core/ports/database.ts';
import type { SqlFragment } from '../../core/sql.ts';
import { runMigrations } from '../../core/migrations.ts';
import type { Logger } from '../../core/log.ts';

export interface PostgresOptions {
  url: string;
  /** Pool size per instance. */
  max?: number;
  /** Run everything inside this schema (created when missing); tests isolate suites with it. */
  schema?: string;
}

function wrap(sql: postgres.Sql | postgres.TransactionSql): Queryable {
  return {
    async query<T>(statement: SqlFragment): Promise<T[]> {
      const { text, values } = statement.build();
      return (await sql.unsafe(text, values as any[])) as unknown as T[];
    },
  };
}

/** A DatabasePort over a postgres.js pool. */
export function createPostgresDatabase(options: PostgresOptions, logger?: Logger): DatabasePort {
  const pool = postgres(options.url, {
    max: options.max ?? 10,
    onnotice: () => {},
    idle_timeout: 30,
    connection: options.schema ? { search_path: `${options.schema},public` } : {},
    // BIGINT stays a string (postgres.js default); queries cast counts to int where numbers are wanted.
  });
  // search_path may name a schema that does not exist yet; create it once, before first use.
  // Two creators racing can hit a catalog unique violation: the schema then exists, so retry once.
  const createSchema = () => pool.unsafe(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
  let schemaReady: Promise<unknown> | null = null;
  const ensureSchema = () => (schemaReady ??= options.schema ? createSchema().catch(createSchema) : Promise.resolve());
  const base = wrap(pool);
  return {
    kind: 'postgres',
    async query<T>(statement: SqlFragment) {
      await ensureSchema();
      return base.query<T>(statement);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      await ensureSchema();
      return (await pool.begin((tx) => fn(wrap(tx)))) as T;
    },
    async migrate(owner: string, migrations: readonly Migration[]) {
      await ensureSchema();
      const done = await pool.begin((tx) =>
        runMigrations(
          {
            exec: async (script) => {
              await tx.unsafe(script);
            },
            rows: async (text, values) => (await tx.unsafe(text, values as any[])) as any,
          },
          owner,
          migrations,
        ),
      );
      if (done.length) logger?.info({ migrations: done }, 'migrations applied');
    },
    async listen(channel, handler, onReconnect) {
      let first = true;
      const { unlisten } = await pool.listen(channel, handler, () => {
        if (!first) onReconnect?.();
        first = false;
      });
      return unlisten;
    },
    async ping() {
      await pool.unsafe('SELECT 1');
    },
    async close() {
      await pool.end({ timeout: 5 });
    },
  };
}

export default definePlugin({
  name: 'storage-postgres',
  provides: [Database],
  options: v.object({
    url: v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')),
    max: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(200))),
    schema: v.optional(v.pipe(v.string(), v.regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a plain lowercase identifier'))),
  }),
  register(ctx) {
    ctx.provide(Database, createPostgresDatabase(ctx.options, ctx.logger));
  },
  async start(ctx) {
    await ctx.get(Database).ping();
    ctx.logger.info('connected to Postgres');
  },
  async stop(ctx) {
    await ctx.get(Database).close();
  },
});
