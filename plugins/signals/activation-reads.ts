import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { Logger } from '../../core/log.ts';
import { CoalescedRead } from '../../lib/coalesced-read.ts';
import { activationsAndVersion, activationsOf, type ActivationRow, type ActivationsWanted } from './catalog.ts';

/** Channel of activation changes on a local database, per schema (see CATALOG_CHANNEL). */
const ACTIVATIONS_CHANNEL = sql.raw(`'signal_activations_' || left(md5(current_schema()), 16)`);

/** Principals whose activations a local copy holds; a principal with more rows is read each time. */
const MAX_PRINCIPALS = 10_000;
const MAX_ROWS_PER_PRINCIPAL = 1_000;

/** What a get_signals answer reads besides the catalog: the caller's activations, and the catalog version that proves its copy current (null: exact by notification). */
export interface ActivationsRead {
  version: string | null;
  activations: ActivationRow[];
}

/**
 * The per-answer read of get_signals, kept exact on both kinds of database:
 * - Shared (Postgres, any number of instances): every request waiting at once is served by one
 *   query, the caller's activations and the catalog version. A request joins the next query to
 *   start, never one already under way, so what it reads was committed no earlier than its arrival.
 * - Local (PGlite: this process is the database's only client): each principal's activations in
 *   memory. Every writer announces its change in its transaction (`changed`), and a local database
 *   delivers the announcement before the writing call returns, so the copy is never behind.
 */
export class ActivationReads {
  /** Shared database: one query per round for every request waiting at once. */
  private readonly rounds: CoalescedRead<{ version: string; activations: (ActivationRow & { principal_id: string })[] }, ActivationsWanted>;
  /** Local database: principal -> its activations by signal id (null: too many to keep). */
  private readonly copies = new Map<string, Map<string, ActivationRow[]> | null>();
  private generation = 0;

  constructor(private readonly db: DatabasePort) {
    this.rounds = new CoalescedRead((wanted) => activationsAndVersion(db, wanted));
  }

  /** On a local database, keep copies current from change announcements; resolves to the unsubscribe function. */
  async follow(logger: Logger): Promise<() => Promise<void>> {
    if (!this.db.local) return async () => {};
    const [row] = await this.db.query<{ channel: string }>(sql`SELECT ${ACTIVATIONS_CHANNEL} AS channel`);
    logger.debug({ channel: row!.channel }, 'activation copies follow change announcements');
    return this.db.listen(row!.channel, (principalId) => this.drop(principalId));
  }

  /**
   * Announce a change of `principalId`'s activations inside the writing transaction `q`. Only a
   * local database keeps copies; a shared one reads every time, and a NOTIFY per activation would
   * serialize its commits.
   */
  async changed(q: Queryable, principalId: string): Promise<void> {
    if (this.db.local) await q.query(sql`SELECT pg_notify(${ACTIVATIONS_CHANNEL}, ${principalId}::text)`);
  }

  /** Forget every copy (the catalog changed: a removed signal takes its activations with it). */
  dropAll(): void {
    this.generation++;
    this.copies.clear();
  }

  async read(principalId: string, signalIds: string[]): Promise<ActivationsRead> {
    if (this.db.local) return this.fromCopy(principalId, signalIds);
    const { version, activations } = await this.rounds.read({ principalId, signalIds });
    const ids = new Set(signalIds);
    return { version, activations: activations.filter((a) => a.principal_id === principalId && ids.has(a.signal_id)) };
  }

  private drop(principalId: string): void {
    this.generation++;
    this.copies.delete(principalId);
  }

  private async fromCopy(principalId: string, signalIds: string[]): Promise<ActivationsRead> {
    let copy = this.copies.get(principalId);
    if (copy === undefined) {
      const generation = this.generation;
      const rows = await activationsOf(this.db, principalId, MAX_ROWS_PER_PRINCIPAL + 1);
      copy = rows.length > MAX_ROWS_PER_PRINCIPAL ? null : bySignal(rows);
      // A change announced while reading leaves nothing behind that could be older than it.
      if (generation === this.generation) {
        if (this.copies.size >= MAX_PRINCIPALS) this.copies.clear();
        this.copies.set(principalId, copy);
      }
    }
    if (copy === null) {
      const { activations } = await activationsAndVersion(this.db, [{ principalId, signalIds }]);
      return { version: null, activations };
    }
    return { version: null, activations: signalIds.flatMap((id) => copy.get(id) ?? []) };
  }
}

function bySignal(rows: ActivationRow[]): Map<string, ActivationRow[]> {
  const out = new Map<string, ActivationRow[]>();
  for (const r of rows) {
    const list = out.get(r.signal_id);
    if (list) list.push(r);
    else out.set(r.signal_id, [r]);
  }
  return out;
}
