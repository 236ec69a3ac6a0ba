import { TtlCache } from '../../lib/cache.ts';
import { followChanges } from '../../lib/follow-changes.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { Logger } from '../../core/log.ts';
import type { SalesAccount } from '../../core/ports/sales-accounts.ts';

/** Channel of migration 003's triggers: the id of a changed account, or `*`. */
export const ACCOUNT_CHANGES = 'sales_account_changes';

/**
 * Per-instance copy of the accounts requests name, by id and by natural key (owner, brand, operator,
 * sandbox): every read of a buy or a creative resolves one first. The database announces every change
 * to a stored account on commit (migration 003) and each instance drops it; an account that does not
 * exist is never kept, so one created anywhere is found at once. A read that overlaps any change is
 * answered but not kept, so a slow read cannot put back what a change dropped. Entries expire after
 * `ttlMs` should an announcement ever be lost. An account this instance is changing (`changing`) is
 * not kept until its announcement arrives: the announcement travels on another connection and may
 * come after the writer's caller has already read the account again.
 */
export class AccountCache {
  private readonly byId: TtlCache<string, SalesAccount>;
  private readonly byKey: TtlCache<string, string>;
  /** Accounts being changed here, until their announcement (or, a change rolled back, until this expires). */
  private readonly pending: TtlCache<string, true>;
  private generation = 0;

  constructor(maxEntries = 10_000, ttlMs = 60_000, pendingMs = 5_000, now: () => number = Date.now) {
    this.byId = new TtlCache(maxEntries, ttlMs, now);
    this.byKey = new TtlCache(maxEntries, ttlMs, now);
    this.pending = new TtlCache(maxEntries, pendingMs, now);
  }

  static naturalKey(owner: string, brandDomain: string, operator: string, sandbox: boolean): string {
    return `${owner}\n${brandDomain}\n${operator}\n${sandbox}`;
  }

  get(accountId: string): SalesAccount | undefined {
    return this.byId.get(accountId);
  }

  find(naturalKey: string): SalesAccount | undefined {
    const id = this.byKey.get(naturalKey);
    const a = id === undefined ? undefined : this.byId.get(id);
    // The account was dropped and read again under another natural key: this one leads nowhere.
    return a && AccountCache.naturalKey(a.owner, a.brand_domain, a.operator, a.sandbox) === naturalKey ? a : undefined;
  }

  /** Read through the copy: `load` reads the database; what it found is kept unless a change was announced meanwhile. */
  async load<T extends SalesAccount | SalesAccount[] | undefined>(load: () => Promise<T>): Promise<T> {
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation) for (const a of [value ?? []].flat()) this.keep(a);
    return value;
  }

  private keep(a: SalesAccount): void {
    if (this.pending.has(a.account_id)) return;
    this.byId.set(a.account_id, a);
    this.byKey.set(AccountCache.naturalKey(a.owner, a.brand_domain, a.operator, a.sandbox), a.account_id);
  }

  /** Apply one change announcement: an account id, or `*` (everything). */
  invalidate(change: string): void {
    this.drop(change);
    if (change === '*') this.pending.clear();
    else this.pending.delete(change);
  }

  /**
   * This instance is about to change the account (call before its UPDATE, in or out of a transaction):
   * it is dropped and not kept again until the change is announced, so a read right after the change
   * commits finds the new row, whichever connection brings the announcement.
   */
  changing(accountId: string): void {
    this.drop(accountId);
    this.pending.set(accountId, true);
  }

  private drop(change: string): void {
    this.generation++;
    if (change === '*') {
      this.byId.clear();
      this.byKey.clear();
    } else this.byId.delete(change); // its natural key then leads nowhere
  }

  /** Follow announcements from every instance (followChanges). */
  follow(db: DatabasePort, logger: Logger): Promise<() => Promise<void>> {
    return followChanges(db, ACCOUNT_CHANGES, (key) => this.invalidate(key), logger, 'account');
  }
}
