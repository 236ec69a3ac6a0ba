import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { IndexStamp, SearchPort } from '../../core/ports/search.ts';
import type { SearchSyncPort, SearchSyncStatus } from '../../core/ports/search-sync.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { Logger } from '../../core/log.ts';
import { profileDocumentsByUrl } from './store/profiles.ts';
import { enqueueAllProfiles } from './store/search-outbox.ts';

export interface SearchSyncOptions {
  /** Agents applied per index write. */
  batch: number;
  /** First retry delay after an index error; doubles per attempt up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
}

interface Watermark {
  generation: string | null;
  applied_version: string;
}

interface Claimed {
  agent_url: string;
  version: string;
}

interface BatchResult {
  applied: number;
  /** A full batch was applied: more may be due. */
  more: boolean;
  /** Another instance holds the drain. */
  busy?: boolean;
  failed?: boolean;
}

/** The index refused a write: the claimed rows back off, the job does not fail. */
class IndexWriteError extends Error {
  constructor(readonly original: unknown) {
    super(original instanceof Error ? original.message : String(original));
  }
}

/** Why the index cannot be trusted to be current, or null when it can. */
export function behindReason(w: Watermark, stamp: IndexStamp | null): string | null {
  if (w.generation === null) return 'the index was never built through the outbox';
  if (!stamp) return 'the index is empty or new';
  if (stamp.generation !== w.generation) return `the index holds generation ${stamp.generation}, the database ${w.generation}`;
  if (stamp.version < Number(w.applied_version)) return `the index applied version ${stamp.version}, the database recorded ${w.applied_version}`;
  return null;
}

/**
 * The drain of the search outbox. One drainer at a time across instances: the watermark row is
 * locked for the batch (the scheduler job skips when another instance holds it). A batch reads
 * the claimed agents' current documents (absent = remove), writes them and the new stamp to the
 * index, then deletes the rows whose version did not move and advances the watermark, all in one
 * transaction; an adapter backed by the registry database (search-postgres) writes through that
 * transaction too, so its index and the outbox commit together. Before its first batch, a process
 * checks the index against the watermark and rebuilds it when it is behind.
 */
export function createSearchSync(
  deps: { db: DatabasePort; search: SearchPort; clock: ClockPort; ids: IdsPort; logger: Logger },
  options: SearchSyncOptions,
): SearchSyncPort & { runJob(): Promise<'again' | undefined> } {
  const { db, search, clock, ids, logger } = deps;
  let verified = false;

  async function rebuild(tx: Queryable, now: Date, reason: string): Promise<string> {
    const generation = ids.uuid7();
    // A rebuild nobody asked for means the index lost changes: worth a warning.
    logger[reason === 'requested' ? 'info' : 'warn']({ reason, generation, kind: search.kind }, 'rebuilding the agent search index from the database');
    await search.clear(tx);
    await search.setStamp({ generation, version: 0 }, tx);
    await enqueueAllProfiles(tx, now);
    await tx.query(sql`
      UPDATE registry_search_watermark SET generation = ${generation}::text, applied_version = 0, index_kind = ${search.kind}::text,
        rebuilt_at = ${now}::timestamptz WHERE id = 1`);
    return generation;
  }

  const claimDrain = (tx: Queryable, wait: boolean) =>
    tx.query<Watermark>(sql`
      SELECT generation, applied_version::text FROM registry_search_watermark WHERE id = 1 FOR UPDATE ${wait ? sql.empty : sql`SKIP LOCKED`}`);

  /**
   * Compare the index with the watermark (once per process) and rebuild it when it is behind, in
   * a transaction of its own: a rebuild is committed before any batch, so an index that then
   * refuses writes does not make every retry start over. False when another instance holds the drain.
   */
  async function verify(wait: boolean, force: boolean): Promise<boolean> {
    const now = clock.now();
    const done = await db.transaction(async (tx) => {
      const [w] = await claimDrain(tx, wait);
      if (!w) return false;
      const reason = force ? 'requested' : behindReason(w, await search.stamp(tx));
      if (reason) await rebuild(tx, now, reason);
      return true;
    });
    if (done) verified = true;
    return done;
  }

  async function batch(wait: boolean, forceRebuild = false): Promise<BatchResult> {
    if ((forceRebuild || !verified) && !(await verify(wait, forceRebuild))) return { applied: 0, more: false, busy: true };
    const now = clock.now();
    let claimed: Claimed[] = [];
    try {
      return await db.transaction(async (tx): Promise<BatchResult> => {
        const [w] = await claimDrain(tx, wait);
        if (!w) return { applied: 0, more: false, busy: true };
        // Reset since this process verified the index (resetDiscovery): rebuild before applying.
        const generation = w.generation ?? (await rebuild(tx, now, 'the watermark was reset'));
        const applied = w.generation ? Number(w.applied_version) : 0;
        claimed = await tx.query<Claimed>(sql`
          SELECT agent_url, version::text FROM registry_search_outbox WHERE attempts = 0 OR next_attempt_at <= ${now}::timestamptz
          ORDER BY version LIMIT ${options.batch}::int`);
        if (claimed.length === 0) return { applied: 0, more: false };
        const urls = claimed.map((r) => r.agent_url);
        const docs = await profileDocumentsByUrl(tx, urls);
        const present = new Set(docs.map((d) => d.agent_url));
        const gone = urls.filter((u) => !present.has(u));
        const top = Math.max(applied, ...claimed.map((r) => Number(r.version)));
        try {
          if (gone.length) await search.remove(gone, tx);
          if (docs.length)
            await search.upsert(
              docs.map(({ agent_id: _id, ...doc }) => doc),
              tx,
            );
          await search.setStamp({ generation, version: top }, tx);
        } catch (error) {
          throw new IndexWriteError(error);
        }
        // A row whose version moved was changed again after we read it: it stays for the next batch.
        await tx.query(sql`
          DELETE FROM registry_search_outbox o USING jsonb_to_recordset(${claimed}::jsonb) AS x(agent_url text, version bigint)
          WHERE o.agent_url = x.agent_url AND o.version = x.version`);
        await tx.query(sql`UPDATE registry_search_watermark SET applied_version = ${top}::bigint WHERE id = 1`);
        return { applied: claimed.length, more: claimed.length === options.batch };
      });
    } catch (error) {
      if (!(error instanceof IndexWriteError)) throw error;
      // The transaction rolled back (with a database-backed index, the index write too); record
      // the attempt outside it. Rows changed meanwhile keep their fresh schedule.
      await db.query(sql`
        UPDATE registry_search_outbox o SET attempts = o.attempts + 1, last_error = ${error.message.slice(0, 500)}::text,
          next_attempt_at = ${now}::timestamptz + make_interval(secs => least(${options.retryMaxMs}::float8, ${options.retryBaseMs}::float8 * power(2, least(o.attempts, 30))) / 1000.0)
        FROM jsonb_to_recordset(${claimed}::jsonb) AS x(agent_url text, version bigint)
        WHERE o.agent_url = x.agent_url AND o.version = x.version`);
      logger.warn({ err: error.original, agents: claimed.length, kind: search.kind }, 'search index write failed; the changes stay queued and are retried');
      return { applied: 0, more: false, failed: true };
    }
  }

  async function drainAll(forceRebuild: boolean): Promise<number> {
    let total = 0;
    for (let first = true; ; first = false) {
      const r = await batch(true, forceRebuild && first);
      if (r.failed) throw new Error('the search index refused a write; the changes stay queued (see the log)');
      total += r.applied;
      if (!r.more) return total;
    }
  }

  return {
    async runJob() {
      // After a batch, look again at once: rows committed while it ran are due too. When another
      // instance holds the drain, the next poll comes back.
      const r = await batch(false);
      return r.applied > 0 ? 'again' : undefined;
    },
    async drain() {
      let total = 0;
      for (;;) {
        const r = await batch(true);
        total += r.applied;
        if (!r.more) return total;
      }
    },
    reindex: () => drainAll(true),
    async status(): Promise<SearchSyncStatus> {
      const [w] = await db.query<Watermark>(sql`SELECT generation, applied_version::text FROM registry_search_watermark WHERE id = 1`);
      const [n] = await db.query<{ pending: number; failing: number }>(sql`
        SELECT count(*)::int AS pending, count(*) FILTER (WHERE attempts > 0)::int AS failing FROM registry_search_outbox`);
      return {
        kind: search.kind,
        pending: n!.pending,
        failing: n!.failing,
        watermark: { generation: w!.generation, version: Number(w!.applied_version) },
        stamp: await search.stamp(),
      };
    },
  };
}
