/**
 * Relevance of catalog ranking, not speed: NDCG@10 over the hand-labelled specs and briefs of
 * test/fixtures/relevance/ on the seed catalogs, for the engine that ranks them (the catalogs'
 * text index, lib/text-index.ts) and, as the baseline measured in the same run, the Postgres
 * full-text ranking the project used before (ts_rank for signals, ts_rank_cd for products, over
 * the same weighted fields: name A, tags/keywords B, description C; 4+ letter words as prefixes).
 * The baseline lives only here; nothing in the product ranks with it.
 */
import { join } from 'node:path';
import { loadMigrations } from '../../core/migrations.ts';
import { sql } from '../../core/sql.ts';
import { importCatalog as importSignals } from '../../plugins/signals/catalog.ts';
import { SignalsCatalog } from '../../plugins/signals/memory-catalog.ts';
import { importCatalog as importProducts } from '../../plugins/inventory-db/catalog.ts';
import { MemoryInventory } from '../../plugins/inventory-db/memory-inventory.ts';
import signalSeed from '../../plugins/signals/seed.json';
import productSeed from '../../plugins/inventory-db/seed.json';
import { openDatabase } from '../support/db.ts';
import { meanNdcg, type Judged } from '../support/ndcg.ts';
import { labelledSet } from '../support/relevance.ts';

const db = await openDatabase('pglite', `bench_relevance_${process.pid}`);
await db.migrate('signals', loadMigrations(join(import.meta.dir, '../../plugins/signals/migrations')));
await db.migrate('inventory-db', loadMigrations(join(import.meta.dir, '../../plugins/inventory-db/migrations')));
await importSignals(db, signalSeed);
await importProducts(db, productSeed);

// The baseline's documents: the weighted tsvectors the rows carried, beside the rows.
await db.query(sql`CREATE TEMP TABLE baseline_signals AS SELECT id, coverage_percentage,
  setweight(to_tsvector('english', name), 'A') || setweight(to_tsvector('english', array_to_string(tags, ' ')), 'B')
    || setweight(to_tsvector('english', description), 'C') AS search FROM signals`);
await db.query(sql`CREATE TEMP TABLE baseline_products AS SELECT product_id, position,
  setweight(to_tsvector('english', name), 'A')
    || setweight(to_tsvector('english', array_to_string(ARRAY(SELECT replace(c, '_', ' ') FROM unnest(channels) c) || tags, ' ')), 'B')
    || setweight(to_tsvector('english', description), 'C') AS search FROM inventory_products`);

/** The query text the baseline built: distinct words of 2+ letters, OR-ed, 4+ letter ones as prefixes. */
const orQuery = (text: string) =>
  [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])]
    .filter((w) => w.length > 1)
    .slice(0, 32)
    .map((w) => (w.length >= 4 ? `${w}:*` : w))
    .join(' | ');

const baselineSignals = async (spec: string) =>
  (
    await db.query<{ id: string }>(sql`SELECT id FROM baseline_signals, to_tsquery('english', ${orQuery(spec)}::text) q
      WHERE search @@ q ORDER BY ts_rank(search, q) DESC, coverage_percentage DESC, id LIMIT 10`)
  ).map((r) => r.id);
const baselineProducts = async (brief: string) =>
  (
    await db.query<{ product_id: string }>(sql`SELECT product_id FROM baseline_products, to_tsquery('english', ${orQuery(brief)}::text) q
      WHERE search @@ q ORDER BY ts_rank_cd(search, q) DESC, position, product_id LIMIT 10`)
  ).map((r) => r.product_id);

const signals = new SignalsCatalog(db);
const copy = await signals.snapshot.get();
const owner = signalSeed.signals.find((s) => 'owner_org' in s)!.owner_org!;
const engineSignals = (spec: string) => signals.search(copy, { orgId: owner, spec, limit: 10 }).rows.map((r) => r.id);
const inventory = new MemoryInventory(db);
const engineProducts = async (brief: string) => (await inventory.search({ brief, limit: 10 })).products.map((p) => p.product_id);

const line = async (label: string, set: Judged[], baseline: (q: string) => Promise<string[]>, engine: (q: string) => Promise<string[]> | string[]) => {
  const before = await meanNdcg(10, set, baseline);
  const after = await meanNdcg(10, set, engine);
  console.log(
    `${label.padEnd(34)} ${String(set.length).padStart(3)} queries  Postgres full-text ${before.toFixed(3)}  text index ${after.toFixed(3)}  ratio ${(after / before).toFixed(3)}`,
  );
};
console.log('NDCG@10 on the labelled sets (test/fixtures/relevance), seed catalogs');
await line('get_signals (specs, ts_rank)', labelledSet('signals'), baselineSignals, engineSignals);
await line('get_products (briefs, ts_rank_cd)', labelledSet('products'), baselineProducts, engineProducts);
await db.close();
