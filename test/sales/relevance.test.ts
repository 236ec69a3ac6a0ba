import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadMigrations } from '../../core/migrations.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import { importCatalog } from '../../plugins/inventory-db/catalog.ts';
import { MemoryInventory } from '../../plugins/inventory-db/memory-inventory.ts';
import seed from '../../plugins/inventory-db/seed.json';
import { forEachDatabase, openDatabase } from '../support/db.ts';
import { meanNdcg, ndcgAt } from '../support/ndcg.ts';
import { labelledSet } from '../support/relevance.ts';

// Quality of get_products' brief ranking on the seed catalog, measured against hand-labelled
// briefs (test/fixtures/relevance/products.json). The Postgres ts_rank_cd it replaced scored 0.935
// on this set; the floor keeps the engine above it. Both storages hold the rows; the one engine
// ranks them, so both give the same rankings.

const FLOOR = 0.95;
const SET = labelledSet('products');
const rankings = new Map<string, string[][]>();

forEachDatabase<DatabasePort>(
  'product relevance',
  async (adapter, schema) => {
    const db = await openDatabase(adapter, schema);
    await db.migrate('inventory-db', loadMigrations(join(import.meta.dir, '../../plugins/inventory-db/migrations')));
    await importCatalog(db, seed);
    return db;
  },
  (db) => db.close(),
  (get, adapter) => {
    test(`NDCG@10 over ${SET.length} labelled briefs is at least ${FLOOR}, and every brief finds a product it should`, async () => {
      const inventory = new MemoryInventory(get());
      const rank = async (brief: string) => (await inventory.search({ brief, limit: 10 })).products.map((p) => p.product_id);
      const score = await meanNdcg(10, SET, rank);
      expect(score).toBeGreaterThanOrEqual(FLOOR);
      const all: string[][] = [];
      for (const q of SET) {
        const ids = await rank(q.query);
        expect({ brief: q.query, found: ndcgAt(10, ids, q.relevant) > 0 }).toEqual({ brief: q.query, found: true });
        all.push(ids);
      }
      rankings.set(adapter, all);
      const other = rankings.get(adapter === 'pglite' ? 'postgres' : 'pglite');
      if (other) expect(all).toEqual(other);
    });
  },
);
