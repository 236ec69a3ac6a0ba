import * as v from 'valibot';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { Inventory, type Product } from '../../core/ports/inventory.ts';
import { countProducts, importCatalog, PRODUCT_COLUMNS, toProduct, type ProductRow } from './catalog.ts';
import { searchProducts } from './search.ts';
import { forecastProduct } from './forecast.ts';

export const DEFAULT_SEED = join(import.meta.dir, 'seed.json');

const options = v.object({
  /** Catalog loaded when the product table is empty (first start); `false` to start empty. */
  seed: v.optional(v.union([v.string(), v.literal(false)]), DEFAULT_SEED),
});

/**
 * The Inventory port on a database catalog: products imported from JSON (`bun run sales import`),
 * ranked by a brief with Postgres full-text search, filtered, paged, and forecast from each
 * product's daily availability and pricing.
 */
export default definePlugin({
  name: 'inventory-db',
  provides: [Inventory],
  deps: { db: Database },
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db }, kernel) {
    kernel.provide(Inventory, {
      search: (query) => searchProducts(db, query),
      async get(ids) {
        if (ids.length === 0) return new Map<string, Product>();
        const rows = await db.query<ProductRow>(sql`SELECT ${PRODUCT_COLUMNS} FROM inventory_products WHERE product_id = ANY(${[...ids]}::text[])`);
        return new Map(rows.map((r) => [r.product_id, toProduct(r)]));
      },
      forecast: forecastProduct,
    });
    return {
      async start() {
        const seed = kernel.options.seed;
        if (seed && (await countProducts(db)) === 0) {
          const counts = await importCatalog(db, JSON.parse(readFileSync(seed, 'utf8')));
          kernel.logger.info({ seed, ...counts }, 'product catalog seeded');
        }
      },
    };
  },
});
