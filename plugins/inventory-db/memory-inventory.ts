import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { Product, ProductPage, ProductQuery } from '../../core/ports/inventory.ts';
import type { Logger } from '../../core/log.ts';
import { CatalogSnapshot } from '../../lib/catalog-snapshot.ts';
import { CoalescedRead } from '../../lib/coalesced-read.ts';
import { orQueryOperands, TsQueryParses, type QueryOperand } from '../../lib/text-search.ts';
import { CATALOG_CHANNEL, PRODUCT_COLUMNS, toProduct, type ProductRow } from './catalog.ts';
import { briefQuery, briefWords } from './brief.ts';
import { loadCatalog, productsOf, searchCatalog, type ProductCatalog } from './memory-catalog.ts';
import { searchProducts } from './search.ts';

/** Tries from memory before the database answers instead (each miss reloads the copy: the catalog changed meanwhile). */
const MEMORY_ATTEMPTS = 3;

/**
 * Product search and lookup answered from this instance's copy of the catalog, exactly as the
 * database would answer them at the time of the call:
 * - Local database (PGlite: this process is its only client, and a NOTIFY arrives before the
 *   writing call returns): a copy that no announcement has made stale is current; no query.
 * - Shared database (Postgres, any number of instances): every answer confirms its copy's version
 *   with a read of the version row, shared by all the calls waiting at that moment and never one
 *   already under way; a copy found behind is reloaded and the answer computed again.
 * What memory does not reproduce (see searchCatalog), or a catalog changing faster than it
 * reloads, is answered by the database (searchProducts).
 */
export class MemoryInventory {
  readonly snapshot: CatalogSnapshot<ProductCatalog>;
  private readonly versions: CoalescedRead<string>;
  private readonly parses: TsQueryParses;

  constructor(private readonly db: DatabasePort) {
    this.snapshot = new CatalogSnapshot(() => loadCatalog(db));
    this.parses = new TsQueryParses(db, orQueryOperands);
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

  async search(q: ProductQuery): Promise<ProductPage> {
    const words = q.brief ? briefWords(q.brief) : [];
    const operands = words.length ? await this.operands(briefQuery(words)) : [];
    return (await this.fromCurrentCopy((c) => searchCatalog(c, q, words, operands))) ?? searchProducts(this.db, q);
  }

  async get(ids: readonly string[]): Promise<Map<string, Product>> {
    if (ids.length === 0) return new Map();
    const found = await this.fromCurrentCopy((c) => productsOf(c, ids));
    if (found) return found;
    const rows = await this.db.query<ProductRow>(sql`SELECT ${PRODUCT_COLUMNS} FROM inventory_products WHERE product_id = ANY(${[...ids]}::text[])`);
    return new Map(rows.map((r) => [r.product_id, toProduct(r)]));
  }

  /** The operands of an OR query as the database parses it (cached); null when it is not a plain OR. */
  operands(query: string): Promise<QueryOperand[] | null> {
    return this.parses.operands(query);
  }

  /** `answer` from a copy proven current at a time after the call began; null when the database must answer. */
  private async fromCurrentCopy<R>(answer: (c: ProductCatalog) => R | null): Promise<R | null> {
    for (let attempt = 0; attempt < MEMORY_ATTEMPTS; attempt++) {
      const copy = await this.snapshot.get();
      const result = answer(copy);
      if (result === null) return null;
      const current = this.db.local ? this.snapshot.fresh && this.snapshot.peek() === copy : (await this.versions.read()) === copy.version;
      if (current) return result;
      // A write committed after the copy was loaded and its notification is not here yet (or was lost).
      if (this.snapshot.peek() === copy) await this.snapshot.refresh();
    }
    return null;
  }
}
