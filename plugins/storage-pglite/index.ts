import type { PGlite } from '@electric-sql/pglite';
import { mkdirSync } from 'node:fs';
import * as v from 'valibot';
import { definePlugin } from '../../core/plugin.ts';
import { InFlight } from '../../lib/in-flight.ts';
import { Database, type DatabasePort, type Queryable, type Migration } from '../../core/ports/database.ts';
import { runBuilt, type SqlFragment } from '../../core/sql.ts';
import { runMigrations } from '../../core/migrations.ts';
import type { Logger } from '../../core/log.ts';
import { ConfigError } from '../../core/config-error.ts';
import { Clock } from '../../core/ports/clock.ts';
import { DataDirLockedError, lockDataDir } from './lock.ts';

export interface PgliteOptions {
  /** Data directory on disk, or `memory://` for a throwaway database. */
  dataDir: string;
  /** Run everything inside this schema (tests isolate suites with it on one shared PGlite). */
  schema?: string;
  /** Reuse an open PGlite (tests share one per process); it is not closed by this adapter. */
  instance?: PGlite;
}

type PgliteSession = Pick<PGlite, 'query' | 'exec'>;

/** Statements of a session; `inFlight` (a transaction's) tracks those not settled yet, which COMMIT waits for. */
function wrap(db: PgliteSession, inFlight?: InFlight): Queryable {
  return {
    query<T>(statement: SqlFragment): Promise<T[]> {
      if (inFlight?.closed) return inFlight.refuse(statement.build().text);
      const run = runBuilt(statement, (text, values) => db.query<T>(text, values).then((r) => r.rows));
      return inFlight ? inFlight.track(run) : run;
    },
  };
}

/**
 * A DatabasePort over embedded PGlite (Postgres compiled to WASM, in this process).
 * PGlite has one connection: queries and transactions are serialized by PGlite itself.
 */
export function createPgliteDatabase(options: PgliteOptions, logger?: Logger): DatabasePort {
  const owned = !options.instance;
  let opening: Promise<PGlite> | null = null;
  let unlock: (() => void) | null = null;
  const open = () =>
    (opening ??= (async () => {
      let db = options.instance;
      if (!db) {
        if (!options.dataDir.startsWith('memory://')) {
          mkdirSync(options.dataDir, { recursive: true });
          // Before PGlite touches the files: a second opener must fail without reading them.
          unlock = lockDataDir(options.dataDir);
        }
        try {
          // Loaded on first open: a deployment on Postgres never pays for the WASM build's module.
          const { PGlite } = await import('@electric-sql/pglite');
          db = await PGlite.create(options.dataDir);
        } catch (error) {
          unlock?.();
          throw error;
        }
      }
      if (options.schema) await db.exec(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
      return db;
    })());
  // A shared instance may be used by several adapters (one per test suite), each with its own schema:
  // set the search_path at the start of every unit of work.
  const scoped = async <T>(fn: (db: PGlite) => Promise<T>): Promise<T> => {
    const db = await open();
    if (!options.schema) return fn(db);
    return db.transaction(async (tx) => {
      await tx.exec(`SET LOCAL search_path TO "${options.schema}", public`);
      return fn(tx as unknown as PGlite);
    });
  };
  return {
    kind: 'pglite',
    local: true,
    query<T>(statement: SqlFragment) {
      return scoped((db) => wrap(db).query<T>(statement));
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const db = await open();
      return db.transaction(async (tx) => {
        if (options.schema) await tx.exec(`SET LOCAL search_path TO "${options.schema}", public`);
        const inFlight = new InFlight((error) => logger?.error({ err: error }, 'statement refused: its transaction had ended'));
        const result = await inFlight.until(() => fn(wrap(tx, inFlight)));
        // A statement still in flight when fn resolves commits with the rest, or fails the transaction (as on Postgres).
        const failed = await inFlight.failure();
        if (failed) throw failed.error;
        return result;
      });
    },
    async migrate(owner: string, migrations: readonly Migration[]) {
      const db = await open();
      const done = await db.transaction(async (tx) => {
        if (options.schema) await tx.exec(`SET LOCAL search_path TO "${options.schema}", public`);
        return runMigrations(
          {
            exec: async (script) => {
              await tx.exec(script);
            },
            rows: async (text, values) => (await tx.query<any>(text, values)).rows,
          },
          owner,
          migrations,
        );
      });
      if (done.length) logger?.info({ migrations: done }, 'migrations applied');
    },
    async listen(channel, handler) {
      // In-process: no connection to lose, so no reconnect signal.
      const db = await open();
      return db.listen(channel, handler);
    },
    async ping() {
      await scoped((db) => db.query('SELECT 1'));
    },
    async close() {
      try {
        if (owned && opening) await (await opening.catch(() => null))?.close();
      } finally {
        unlock?.();
      }
    },
  };
}

export default definePlugin({
  name: 'storage-pglite',
  provides: [Database],
  deps: { clock: Clock },
  env: { DATA_DIR: 'dataDir', DATABASE_SCHEMA: 'schema' },
  options: v.object({
    dataDir: v.optional(v.pipe(v.string(), v.minLength(1)), './data'),
    schema: v.optional(v.pipe(v.string(), v.regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a plain lowercase identifier'))),
    instance: v.optional(
      v.custom<PGlite>((x) => !!x && typeof (x as PGlite).query === 'function' && typeof (x as PGlite).exec === 'function', 'must be a PGlite instance'),
    ),
  }),
  init({ clock }, kernel) {
    const db = createPgliteDatabase(kernel.options, kernel.logger);
    kernel.provide(Database, db);
    return {
      async start() {
        const started = clock.now().getTime();
        try {
          await db.ping();
        } catch (error) {
          if (error instanceof DataDirLockedError) throw new ConfigError(`DATA_DIR: ${error.message}`);
          throw error;
        }
        kernel.logger.info({ dataDir: kernel.options.dataDir, ms: clock.now().getTime() - started }, 'PGlite ready');
      },
      stop: () => db.close(),
    };
  },
});
