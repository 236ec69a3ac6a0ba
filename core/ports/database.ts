import { token } from '../token.ts';
import type { SqlFragment } from '../sql.ts';

export type Row = Record<string, unknown>;

/** Something that runs SQL: the pool itself or an open transaction. */
export interface Queryable {
  /** Run one statement and return its rows (empty for statements without rows). */
  query<T = Row>(statement: SqlFragment): Promise<T[]>;
}

/** One versioned migration of one plugin; `version` orders and identifies it. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The database port. One SQL dialect (Postgres 15+); adapters: storage-postgres, storage-pglite.
 * Contract (test/contract/database.contract.ts):
 * - `query` binds parameters, never interpolates them.
 * - `transaction` commits when `fn` resolves and rolls back when it throws (the error is rethrown).
 *   A statement `fn` issued and left in flight is part of it: COMMIT goes right behind it (one round
 *   trip), and if it fails the transaction rolls back and throws its error. Every statement must be
 *   issued before `fn` resolves: one issued after (a chain of writes not waited for) is refused and
 *   logged, as it would travel behind COMMIT, outside the transaction.
 *   Transactions run at READ COMMITTED; use row locks or advisory locks for ordering.
 * - `migrate` applies each (owner, version) exactly once, in version order, under an advisory
 *   lock so several instances starting together are safe; re-running is a no-op.
 */
export interface DatabasePort extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Every client of the database lives in this process (PGlite: embedded, its data directory
   * locked to one process). A NOTIFY then reaches this process's listeners before the writing call
   * returns, so a copy kept current by notifications is exact without a read to confirm it.
   */
  readonly local: boolean;
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  migrate(owner: string, migrations: readonly Migration[]): Promise<void>;
  /**
   * Subscribe to `NOTIFY channel` (send with `SELECT pg_notify(channel, payload)` inside a
   * transaction: delivered on commit, to every instance). `onReconnect` runs when the listening
   * connection was re-established, since notifications may have been missed meanwhile.
   * Resolves to an unsubscribe function.
   */
  listen(channel: string, handler: (payload: string) => void, onReconnect?: () => void): Promise<() => Promise<void>>;
  /** Resolves when the database answers; used by /ready. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const Database = token<DatabasePort>('core.database');

/**
 * The database cannot be reached or did not answer in time (refused, reset, connect or statement
 * timeout). Adapters raise it so hosts answer 503 with Retry-After instead of 500; the pool
 * reconnects by itself when the database is back.
 */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
  /** Seconds a client should wait before retrying. */
  readonly retryAfter = 5;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A unique violation (SQLSTATE 23505), as both adapters report it: a row with that key exists. */
export const isUniqueViolation = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === '23505';
