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
 * `ttlMs` should an announcement ever be lost.
 */
export class AccountCache {
  private readonly byId: TtlCache<string, SalesAccount>;
  private readonly byKey: TtlCache<string, string>;
  private generation = 0;

  constructor(maxEntries = 10_000, ttlMs = 60_000) {
    this.byId = new TtlCache(maxEntries, ttlMs);
    this.byKey = new TtlCache(maxEntries, ttlMs);
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
    this.byId.set(a.account_id, a);
    this.byKey.set(AccountCache.naturalKey(a.owner, a.brand_domain, a.operator, a.sandbox), a.account_id);
  }

  /** Apply one change announcement: an account id, or `*` (everything). */
  invalidate(change: string): void {
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
