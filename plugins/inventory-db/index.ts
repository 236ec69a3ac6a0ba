import * as v from 'valibot';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { definePlugin, optional } from '../../core/plugin.ts';
import { TestController } from '../../core/ports/test-controller.ts';
import { CreativeFormats } from '../../core/ports/creative-formats.ts';
import { inventoryScenarios } from './test-controls.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Inventory } from '../../core/ports/inventory.ts';
import { countProducts, importCatalog } from './catalog.ts';
import { MemoryInventory } from './memory-inventory.ts';
import { forecastProduct } from './forecast.ts';

export const DEFAULT_SEED = join(import.meta.dir, 'seed.json');

const options = v.object({
  /** Catalog file(s) loaded, in order, when the product table is empty (first start); `false` to start empty. */
  seed: v.optional(v.union([v.string(), v.array(v.string()), v.literal(false)]), DEFAULT_SEED),
  /** Publishers a sandbox product fixture (seed_product) sells when the fixture names none. */
  fixturePublishers: v.optional(v.array(v.pipe(v.string(), v.regex(/^[a-z0-9.-]{1,253}$/, 'must be a lowercase domain'))), ['sandbox-publisher.example']),
});

/**
 * The Inventory port on a database catalog: products imported from JSON (`bun run sales import`),
 * ranked by a brief with the catalog's text index (product-index.ts), filtered, paged, and forecast from each
 * product's daily availability and pricing. Searches and lookups are answered from each instance's
 * copy of the catalog, current as of each call (memory-inventory.ts).
 */
export default definePlugin({
  name: 'inventory-db',
  provides: [Inventory],
  deps: { db: Database, controller: optional(TestController), formats: optional(CreativeFormats) },
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, controller, formats }, kernel) {
    const inventory = new MemoryInventory(db);
    let unfollow: (() => Promise<void>) | undefined;
    kernel.provide(Inventory, {
      search: (query) => inventory.search(query),
      get: (ids, viewer) => inventory.get(ids, viewer),
      forecast: forecastProduct,
    });
    controller?.register(...inventoryScenarios(db, kernel.options.fixturePublishers, formats?.agentUrl));
    return {
      async start() {
        const seed = kernel.options.seed;
        if (seed && (await countProducts(db)) === 0) {
          for (const file of typeof seed === 'string' ? [seed] : seed) {
            const counts = await importCatalog(db, JSON.parse(readFileSync(file, 'utf8')));
            kernel.logger.info({ seed: file, ...counts }, 'product catalog seeded');
          }
        }
        unfollow = await inventory.follow(kernel.logger);
        await inventory.snapshot.get();
      },
      async stop() {
        await unfollow?.();
      },
    };
  },
});
