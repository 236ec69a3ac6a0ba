import { TtlCache } from '../../lib/cache.ts';
import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { Logger } from '../../core/log.ts';
import type { Entry } from './store.ts';

/** Channel on which every instance announces changed entries (`<table>:<domain>`). */
export const ENTRY_CHANGES = 'registry_entry_changes';

/** Announce a change inside the writing transaction; delivered to every instance on commit. */
export async function announceChange(tx: Queryable, table: string, domain: string): Promise<void> {
  await tx.query(sql`SELECT pg_notify(${ENTRY_CHANGES}::text, ${`${table}:${domain}`}::text)`);
}

/**
 * Read-through cache of current entries (hits and misses) for the resolve endpoints. Writers
 * announce changes with NOTIFY in their transaction, so every instance drops the key on commit;
 * the TTL bounds staleness if a notification is ever lost. A load that overlaps an invalidation
 * is not stored (generation check), so a slow reader cannot re-insert the old value.
 */
export class EntryCache<D> {
  private readonly cache: TtlCache<string, Entry<D> | null>;
  private generation = 0;

  constructor(
    private readonly table: string,
    options: { maxEntries?: number; ttlMs?: number } = {},
  ) {
    this.cache = new TtlCache(options.maxEntries ?? 10_000, options.ttlMs ?? 30_000);
  }

  async get(domain: string, load: (domain: string) => Promise<Entry<D> | undefined>): Promise<Entry<D> | null> {
    const hit = this.cache.get(domain);
    if (hit !== undefined) return hit;
    const generation = this.generation;
    const value = (await load(domain)) ?? null;
    if (generation === this.generation) this.cache.set(domain, value);
    return value;
  }

  invalidate(domain?: string): void {
    this.generation++;
    if (domain === undefined) this.cache.clear();
    else this.cache.delete(domain);
  }

  /** Follow change announcements from every instance; returns the unsubscribe function. */
  follow(db: DatabasePort, logger: Logger): Promise<() => Promise<void>> {
    const prefix = `${this.table}:`;
    return db.listen(
      ENTRY_CHANGES,
      (payload) => {
        if (payload.startsWith(prefix)) this.invalidate(payload.slice(prefix.length));
      },
      () => {
        logger.warn({ table: this.table }, 'change listener reconnected; cache cleared');
        this.invalidate();
      },
    );
  }
}
