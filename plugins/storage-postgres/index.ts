import postgres from 'postgres';
import * as v from 'valibot';
import { definePlugin } from '../../core/plugin.ts';
import { ConfigError } from '../../core/config-error.ts';
import { Database, type DatabasePort, type Queryable, type Migration } from '../../core/ports/database.ts';
import { runBuilt, type SqlFragment } from '../../core/sql.ts';
import { runMigrations } from '../../core/migrations.ts';
import { InFlight } from '../../lib/in-flight.ts';
import type { Logger } from '../../core/log.ts';
import { describeConnectFailure, isConnectionLost, isUnavailable, parseTarget, timed, unavailable } from './connection.ts';

export interface PostgresOptions {
  url: string;
  /** Pool size per instance. */
  max?: number;
  /** Run everything inside this schema (created when missing); tests isolate suites with it. */
  schema?: string;
  /** Give up opening a connection after this many seconds (default 5). */
  connectTimeoutSeconds?: number;
  /**
   * A statement may run this long (server-side `statement_timeout`); a statement, or a transaction
   * making no progress, that has no answer a second later is abandoned client-side (a black-holed
   * network). Either way the caller gets DatabaseUnavailableError. Default 15 000. Migrations are exempt.
   */
  statementTimeoutMs?: number;
  /**
   * Use named prepared statements (default true). Turn off behind a pooler in transaction mode
   * (PgBouncer before 1.21) that cannot keep a connection's prepared statements.
   */
  prepare?: boolean;
  /**
   * Let the server JIT-compile statements it estimates dear (default false). Its estimate of a
   * batched read (one statement answering many callers) is the sum of theirs, and compilation
   * costs tens to hundreds of milliseconds on every run of a prepared statement: worth it for
   * long analytical queries, never for this workload's short ones.
   */
  jit?: boolean;
}

type Session = postgres.Sql | postgres.ReservedSql;

/**
 * Statements of a session; `progress` runs after each one that completes. `inFlight` (a
 * transaction's) tracks the statements not settled yet: COMMIT is sent behind them.
 */
function wrap(sql: Session, progress?: () => void, inFlight?: InFlight, lost?: { lost: boolean }): Queryable {
  return {
    query<T>(statement: SqlFragment): Promise<T[]> {
      // A transaction's connection once lost takes nothing more: postgres.js would schedule the write
      // for a socket it has already dropped, and throw from a timer where nothing can catch it.
      if (lost?.lost) return Promise.reject(unavailable(new Error("the transaction's connection was lost")));
      if (inFlight?.closed) return inFlight.refuse(statement.build().text);
      // Prepared (postgres.js' default for its own templates, off for `unsafe`): a statement
      // with parameters is parsed and described once per connection; unprepared, each run first
      // waits for a Describe round trip and stops the connection's pipeline until it returns.
      // Unprepared (the unnamed statement) is how Postgres plans with each run's values (planEachRun):
      // after five runs a named one may keep a generic plan, chosen for no values in particular.
      const prepare = !statement.planEachRun;
      const run = runBuilt(statement, (text, values) =>
        (sql.unsafe(text, values as any[], { prepare }) as unknown as Promise<T[]>).then(
          (rows) => {
            progress?.();
            return rows;
          },
          (error: unknown) => {
            if (lost && isConnectionLost(error)) lost.lost = true;
            throw isUnavailable(error) ? unavailable(error) : error;
          },
        ),
      );
      return inFlight ? inFlight.track(run) : run;
    },
  };
}

/** A DatabasePort over a postgres.js pool. */
export function createPostgresDatabase(options: PostgresOptions, logger?: Logger): DatabasePort {
  const statementMs = options.statementTimeoutMs ?? 15_000;
  // The server cancels a slow statement first; the client stops waiting only when no answer comes at all.
  const patienceMs = statementMs + 1000;
  const target = parseTarget(options.url);
  const pool = postgres(options.url, {
    max: options.max ?? 10,
    onnotice: () => {},
    prepare: options.prepare ?? true,
    idle_timeout: 30,
    connect_timeout: options.connectTimeoutSeconds ?? 5,
    ...(target.host ? { host: target.host as unknown as string, port: target.port as unknown as number } : {}),
    connection: {
      statement_timeout: statementMs,
      ...(options.jit ? {} : { jit: 'off' }),
      ...(options.schema ? { search_path: `${options.schema},public` } : {}),
    },
    // BIGINT stays a string (postgres.js default); queries cast counts to int where numbers are wanted.
  });
  // search_path may name a schema that does not exist yet; create it once, before first use.
  // Two creators racing can hit a catalog unique violation: the schema then exists, so retry once.
  const createSchema = () => pool.unsafe(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
  let schemaReady: Promise<unknown> | null = null;
  // Once it exists, a statement goes out without waiting on anything (no promise, no timer per statement).
  let schemaExists = !options.schema;
  const ensureSchema = async () => {
    schemaReady ??= options.schema ? createSchema().catch(createSchema) : Promise.resolve();
    try {
      await timed(schemaReady, patienceMs);
      schemaExists = true;
    } catch (error) {
      schemaReady = null; // try again on the next call: the database may be back
      throw isUnavailable(error) ? unavailable(error) : error;
    }
  };
  const base = wrap(pool);
  return {
    kind: 'postgres',
    local: false,
    query<T>(statement: SqlFragment): Promise<T[]> {
      if (!schemaExists) return ensureSchema().then(() => timed(base.query<T>(statement), patienceMs));
      // Not an async function: returning the promise from one costs extra turns of the microtask queue.
      return timed(base.query<T>(statement), patienceMs);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      if (!schemaExists) await ensureSchema();
      // A watchdog rather than a deadline: a long transaction is fine as long as statements complete.
      // Progress only counts; one timer looks every quarter of the patience and gives up after four
      // looks in a row saw none (no progress for the patience, at most a quarter more).
      let timer: ReturnType<typeof setTimeout> | undefined;
      let stall!: (error: Error) => void;
      const stalled = new Promise<never>((_, reject) => {
        stall = reject;
      });
      let progress = 0;
      // Lost: a statement failed for the connection, or the watchdog gave up on it (it may close any time).
      const connection = { lost: false };
      const arm = () => {
        progress++;
      };
      const watch = (seen: number, quiet: number) => {
        timer = setTimeout(() => {
          if (progress !== seen) watch(progress, 0);
          else if (quiet + 1 >= 4) {
            connection.lost = true;
            stall(unavailable(new Error(`a transaction made no progress for ${patienceMs} ms`)));
          } else watch(seen, quiet + 1);
        }, patienceMs / 4);
      };
      watch(progress, 0);
      const run = (async () => {
        const c = await pool.reserve();
        // Only a connection left idle (committed or rolled back) goes back to the pool; a broken one
        // is already closed by postgres.js and reopened on demand.
        let idle = false;
        try {
          arm();
          let ended = false;
          try {
            const inFlight = new InFlight((error) => logger?.error({ err: error }, 'statement refused: its transaction had ended'));
            // BEGIN is not a round trip of its own: it travels with the transaction's first statements,
            // and is in flight as they are (a function that waits for nothing has COMMIT sent right behind).
            inFlight.track(c.unsafe('BEGIN') as unknown as Promise<unknown>).catch(() => {});
            const result = await inFlight.until(() => fn(wrap(c, arm, inFlight, connection)));
            if (connection.lost) throw unavailable(new Error("the transaction's connection was lost"));
            // A statement still in flight when fn resolves (the idempotency record, written last) gets
            // COMMIT right behind it, in one round trip. Should it fail, the transaction is aborted and
            // COMMIT only rolls back: its failure is the transaction's.
            const failure = inFlight.failure();
            const committed = c.unsafe('COMMIT');
            committed.catch(() => {});
            const failed = await failure;
            const done = await committed;
            ended = idle = true;
            if (failed) throw failed.error;
            // A failed statement fn caught and went on from: nothing was committed.
            if (done.command === 'ROLLBACK') throw new Error('the transaction was rolled back at COMMIT: one of its statements had failed');
            return result;
          } catch (error) {
            // A lost connection is not written to again (the server rolls back what it drops).
            if (isConnectionLost(error)) connection.lost = true;
            if (!ended && !connection.lost)
              await c.unsafe('ROLLBACK').then(
                () => (idle = true),
                () => {},
              );
            throw error;
          }
        } finally {
          if (idle) c.release();
        }
      })();
      run.catch(() => {});
      try {
        return await Promise.race([run, stalled]);
      } catch (error) {
        throw isUnavailable(error) ? unavailable(error) : error;
      } finally {
        clearTimeout(timer);
      }
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
      await timed(
        pool.unsafe('SELECT 1').catch((error) => {
          throw isUnavailable(error) ? unavailable(error) : error;
        }),
        patienceMs,
      );
    },
    async close() {
      await pool.end({ timeout: 5 });
    },
  };
}

const seconds = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(max));

export default definePlugin({
  name: 'storage-postgres',
  provides: [Database],
  env: {
    DATABASE_URL: 'url',
    DATABASE_SCHEMA: 'schema',
    DATABASE_POOL_MAX: { path: 'max', type: 'int' },
    DATABASE_CONNECT_TIMEOUT: { path: 'connectTimeoutSeconds', type: 'int' },
    DATABASE_STATEMENT_TIMEOUT_MS: { path: 'statementTimeoutMs', type: 'int' },
    DATABASE_PREPARE: { path: 'prepare', type: 'bool' },
    DATABASE_JIT: { path: 'jit', type: 'bool' },
  },
  options: v.object({
    url: v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')),
    max: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(200))),
    schema: v.optional(v.pipe(v.string(), v.regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a plain lowercase identifier'))),
    connectTimeoutSeconds: v.optional(seconds(300), 5),
    statementTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(3_600_000)), 15_000),
    prepare: v.optional(v.boolean(), true),
    jit: v.optional(v.boolean(), false),
  }),
  init(_deps, kernel) {
    const db = createPostgresDatabase(kernel.options, kernel.logger);
    kernel.provide(Database, db);
    return {
      async start() {
        try {
          await db.ping();
        } catch (error) {
          const cause = (error as { cause?: unknown }).cause ?? error;
          throw new ConfigError(`DATABASE_URL: cannot connect to Postgres at ${parseTarget(kernel.options.url).display}: ${describeConnectFailure(cause)}`);
        }
        kernel.logger.info('connected to Postgres');
      },
      stop: () => db.close(),
    };
  },
});
