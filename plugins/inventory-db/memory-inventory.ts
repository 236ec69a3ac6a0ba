import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { Product, ProductPage, ProductQuery } from '../../core/ports/inventory.ts';
import type { Logger } from '../../core/log.ts';
import { CatalogSnapshot } from '../../lib/catalog-snapshot.ts';
import { CoalescedRead } from '../../lib/coalesced-read.ts';
import { CATALOG_CHANNEL } from './catalog.ts';
import { loadCatalog, productsOf, searchCatalog, type ProductCatalog } from './memory-catalog.ts';

/**
 * Product search and lookup answered from this instance's copy of the catalog and its text index
 * (the one ranking of products), current as of the call. A copy is proven current by its
 * snapshot (a local database's notifications arrive before the writing call returns) or else by a
 * read of the version row, shared by all the calls waiting at that moment and never one already
 * under way. A copy found behind (a write committed before its notification arrived) is reloaded,
 * and the reloaded copy, loaded after the call began, answers.
 */
export class MemoryInventory {
  readonly snapshot: CatalogSnapshot<ProductCatalog>;
  private readonly versions: CoalescedRead<string>;

  constructor(private readonly db: DatabasePort) {
    this.snapshot = new CatalogSnapshot(() => loadCatalog(db), db.local);
    this.versions = new CoalescedRead(async () => {
      const [row] = await db.query<{ version: string }>(sql`SELECT version::text AS version FROM inventory_catalog_version`);
      return row?.version ?? '';
    });
  }

  /** Reload on every change announcement (and listener reconnect); resolves to the unsubscribe function. */
  async follow(logger: Logger): Promise<() => Promise<void>> {
    const [row] = await this.db.query<{ channel: string }>(sql`SELECT ${CATALOG_CHANNEL} AS channel`);
    return this.snapshot.follow(this.db, row!.channel, logger);
  }

  search(q: ProductQuery): Promise<ProductPage> {
    return this.fromCurrentCopy((c) => searchCatalog(c, q));
  }

  async get(ids: readonly string[], viewer?: string): Promise<Map<string, Product>> {
    if (ids.length === 0) return new Map();
    return this.fromCurrentCopy((c) => productsOf(c, ids, viewer));
  }

  /** `answer` from a copy current at a time after the call began. */
  private async fromCurrentCopy<R>(answer: (c: ProductCatalog) => R): Promise<R> {
    const copy = await this.snapshot.get();
    const result = answer(copy);
    if (this.snapshot.settled(copy) || (await this.versions.read()) === copy.version) return result;
    return answer(await this.snapshot.refresh());
  }
}
