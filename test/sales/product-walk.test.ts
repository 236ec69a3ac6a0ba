import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadMigrations } from '../../core/migrations.ts';
import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ProductQuery } from '../../core/ports/inventory.ts';
import { announceCatalogChange, importCatalog } from '../../plugins/inventory-db/catalog.ts';
import { MemoryInventory } from '../../plugins/inventory-db/memory-inventory.ts';
import { MAX_COUNTED, productAt, type ProductCatalog } from '../../plugins/inventory-db/memory-catalog.ts';
import seed from '../../plugins/inventory-db/seed.json';
import { forEachDatabase, openDatabase } from '../support/db.ts';

// A search walks its ranking (or the catalog) from the top and stops once the page is full and
// MAX_COUNTED matches are counted (memory-catalog.ts). These pin, on a catalog larger than that
// bound, that pages are exactly the full ranking (score, then catalog order), that cursors page
// through it without repeats or gaps, and that `total` is there for every page of a query matching
// at most MAX_COUNTED products and absent from every page of one matching more.

const COPIES = 200; // 16 seed products x 201: 3216 products
const WORDS = ['alpine', 'harbor', 'urban', 'rural', 'family', 'student', 'gaming'];

async function generatedCatalog(db: DatabasePort) {
  await db.migrate('inventory-db', loadMigrations(join(import.meta.dir, '../../plugins/inventory-db/migrations')));
  await importCatalog(db, seed);
  // Copies of the seed rows, their names varied with a word so the brief's scores vary, in catalog order after the seed.
  await db.transaction(async (tx) => {
    await tx.query(sql`
      INSERT INTO inventory_products (product_id, name, description, publisher_properties, channels, delivery_type, format_ids,
        format_keys, pricing_options, currencies, has_fixed_price, tags, countries, daily_avails, ctr, position, updated_at)
      SELECT product_id || '_c' || g, name || ' ' || (${WORDS}::text[])[1 + (g + position) % ${WORDS.length}::int], description,
        publisher_properties, channels, delivery_type, format_ids, format_keys, pricing_options, currencies, has_fixed_price, tags,
        countries, daily_avails, ctr, position + g * 100, now()
      FROM inventory_products CROSS JOIN generate_series(1, ${COPIES}::int) g`);
    await announceCatalogChange(tx);
  });
  return db;
}

/** The copy's products in catalog order, rebuilt, with their distinct channels and tags. */
const productsIn = (c: ProductCatalog) =>
  Array.from({ length: c.products.size }, (_, order) => {
    const product = productAt(c, order);
    return { product, order, channels: [...new Set(product.channels)], tags: [...new Set(product.tags)] };
  });

/** The full ranking of a query, computed apart from the search: brief score (or none), then catalog order; the filters used here. */
function reference(c: ProductCatalog, q: Omit<ProductQuery, 'limit'>): string[] {
  const ranking = q.brief ? c.index.rank(q.brief) : null;
  return productsIn(c)
    .map((e, i) => ({ e, score: ranking ? ranking.scoreOf(i) : 0 }))
    .filter(({ e, score }) => score !== undefined && (!q.channels || e.channels.some((x) => q.channels!.includes(x))))
    .filter(({ e }) => !q.deliveryTypes || q.deliveryTypes.includes(e.product.delivery_type))
    .filter(({ e }) => !q.onlyIds || q.onlyIds.includes(e.product.product_id))
    .sort((a, b) => b.score! - a.score! || a.e.order - b.e.order)
    .map(({ e }) => e.product.product_id);
}

const QUERIES: Array<Omit<ProductQuery, 'limit'>> = [
  {},
  { brief: 'premium sports video on connected TV' },
  { brief: 'gaming family' },
  { brief: 'podcast listeners', channels: ['podcast'] },
  { channels: ['dooh'], deliveryTypes: ['guaranteed'] },
  { brief: 'harbor', channels: ['ctv', 'olv'] },
];

forEachDatabase<DatabasePort>(
  'product search walk',
  async (adapter, schema) => generatedCatalog(await openDatabase(adapter, schema)),
  (db) => db.close(),
  (get) => {
    test('a first page is the top of the full ranking: brief score, then catalog order, after the filters', async () => {
      const inventory = new MemoryInventory(get());
      const copy = await inventory.snapshot.get();
      expect(copy.products.size).toBe(seed.products.length * (COPIES + 1));
      for (const q of QUERIES) {
        const all = reference(copy, q);
        expect(all.length).toBeGreaterThan(0);
        for (const limit of [1, 7, 100]) {
          const page = await inventory.search({ ...q, limit });
          expect({ q, limit, ids: page.products.map((p) => p.product_id), more: !!page.cursor }).toEqual({
            q,
            limit,
            ids: all.slice(0, limit),
            more: all.length > limit,
          });
        }
      }
    });

    test(`cursors page through the whole ranking; total is on every page up to ${MAX_COUNTED} matches and on none past it`, async () => {
      const inventory = new MemoryInventory(get());
      const copy = await inventory.snapshot.get();
      let broad = 0;
      let narrow = 0;
      for (const q of QUERIES) {
        const all = reference(copy, q);
        if (all.length > MAX_COUNTED) broad++;
        else narrow++;
        const seen: string[] = [];
        const totals = new Set<number | undefined>();
        let cursor: string | undefined;
        for (let n = 0; n < 100; n++) {
          const page = await inventory.search({ ...q, limit: 250, cursor });
          seen.push(...page.products.map((p) => p.product_id));
          totals.add(page.total);
          cursor = page.cursor;
          if (!cursor) break;
        }
        expect({ q, pages: seen }).toEqual({ q, pages: all });
        expect({ q, totals: [...totals] }).toEqual({ q, totals: [all.length > MAX_COUNTED ? undefined : all.length] });
      }
      // Both sides of the bound are exercised.
      expect(broad).toBeGreaterThanOrEqual(2);
      expect(narrow).toBeGreaterThanOrEqual(2);
    });

    test('refine: only named products (include) ranked by the brief; similar ones (more_like_this) before the rest', async () => {
      const inventory = new MemoryInventory(get());
      const copy = await inventory.snapshot.get();
      const named = ['ctv_sports_premium_c7', 'podcast_true_crime', 'ctv_sports_premium', 'olv_news_preroll_c150', 'no_such_product'];
      const q = { brief: 'sports', onlyIds: named };
      const only = await inventory.search({ ...q, limit: 10 });
      expect(only.products.map((p) => p.product_id)).toEqual(reference(copy, q));
      expect(only.total).toBe(reference(copy, q).length);
      const like = await inventory.search({ similarTo: ['ctv_sports_premium'], limit: 5 });
      expect(like.products.map((p) => p.product_id)).not.toContain('ctv_sports_premium');
      expect(like.products[0]!.channels).toContain('ctv');
      const entries = productsIn(copy);
      const anchor = entries.find((e) => e.product.product_id === 'ctv_sports_premium')!;
      const similar = entries.filter(
        (e) => e !== anchor && (e.channels.some((x) => anchor.channels.includes(x)) || e.tags.some((x) => anchor.tags.includes(x))),
      );
      expect(similar.length).toBeLessThanOrEqual(MAX_COUNTED);
      expect(like.total).toBe(similar.length);
      // More than MAX_COUNTED alike: not counted.
      const broad = await inventory.search({ similarTo: ['ctv_sports_premium', 'display_ros_standard', 'podcast_true_crime'], limit: 5 });
      expect(broad.products).toHaveLength(5);
      expect(broad.total).toBeUndefined();
    });
  },
);
