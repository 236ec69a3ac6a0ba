import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { loadMigrations } from '../../core/migrations.ts';
import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ProductQuery } from '../../core/ports/inventory.ts';
import { CHANNELS } from '../../lib/adcp/channels.ts';
import { announceCatalogChange, importCatalog, type CatalogProduct } from '../../plugins/inventory-db/catalog.ts';
import { briefQuery, briefWords } from '../../plugins/inventory-db/brief.ts';
import { encodeCursor, fingerprint } from '../../plugins/inventory-db/cursor.ts';
import { searchCatalog } from '../../plugins/inventory-db/memory-catalog.ts';
import { MemoryInventory } from '../../plugins/inventory-db/memory-inventory.ts';
import { searchProducts } from '../../plugins/inventory-db/search.ts';
import { forEachDatabase, openDatabase } from '../support/db.ts';
import { rng } from '../support/random.ts';

// The Inventory port answers get_products from memory (memory-catalog.ts, rank-cd.ts) and must
// answer exactly as the SQL ranking (searchProducts, the reference): same products in the same
// order, same totals, same cursors, on a generated catalog of several thousand products full of
// ties, for many briefs, filters, refinements and page walks, on both storages.

const COUNT = 4000;

// Words sharing stems and prefixes, stop words, short words, digits and non-ASCII letters.
const WORDS = (
  'sport sports sporting sportsman fan fans fanatic live stream streaming streamers game games gamer ' +
  'shop shops shopper shoppers shopping buy buyer buyers luxury lux auto autos automotive car cars ' +
  'travel traveler travelling run runner running health healthy fitness gym new news newsletter ' +
  'video videos premium preroll midroll connected tv ctv audio podcast podcasts radio display banner ' +
  'parent parents parenting family families pet pets dog dogs cat cats café naïve 4k ev ai ' +
  'the and of a in to for with in-market high-value b2b 2024 über straße household households'
).split(' ');
const TAGS = ['sports', 'live', 'premium', 'news', 'family', 'gaming', 'auto', 'travel', 'luxury', 'households', 'über'];
const USED_CHANNELS = CHANNELS.filter((_, i) => i < 12);
const AGENTS = ['https://creative.example/', 'https://Creative.example', 'https://other.example/formats'];
const FORMATS = ['video_30s', 'video_15s', 'display_300x250', 'audio_30s', 'native'];
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'JP'];
const CURRENCIES = ['USD', 'EUR', 'GBP'];

function words(r: () => number, n: number): string {
  return Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
}

function generated(): { products: CatalogProduct[] } {
  const r = rng(4242);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const some = <T>(xs: readonly T[], p: number) => xs.filter(() => r() < p);
  const products: CatalogProduct[] = [];
  for (let i = 0; i < COUNT; i++) {
    // Every fourth product is one of a few exact templates: identical text, so identical ranks (ties).
    const tied = i % 4 === 0;
    const template = i % 3;
    const fixed = r() < 0.5;
    products.push({
      // Mixed case and separators; catalog order (position) is not id order.
      product_id: `${pick(['p', 'P', 'prod.x', 'prod:x', 'prod-x', 'prod_x'])}_${(i * 7919) % COUNT}`,
      name: tied ? `Tied ${['sports fans', 'luxury shoppers', 'new parents'][template]}` : words(r, 1 + Math.floor(r() * 4)),
      description: tied ? 'Synthetic tied product.' : words(r, 3 + Math.floor(r() * 30)),
      publisher_properties: [{ publisher_domain: 'pub.example', selection_type: 'all' }],
      // Duplicates now and then: similarity counts distinct shared channels.
      channels: tied ? [USED_CHANNELS[template]!] : [pick(USED_CHANNELS), ...(r() < 0.5 ? [pick(USED_CHANNELS)] : [])],
      delivery_type: pick(['guaranteed', 'non_guaranteed'] as const),
      format_ids: some(FORMATS, 0.3).map((id) => ({ agent_url: pick(AGENTS), id })),
      pricing_options: [
        {
          pricing_option_id: 'a',
          pricing_model: 'cpm',
          currency: pick(CURRENCIES),
          ...(fixed ? { fixed_price: 10 } : { floor_price: 2 }),
        },
        ...(r() < 0.3 ? [{ pricing_option_id: 'b', pricing_model: 'cpc' as const, currency: pick(CURRENCIES), floor_price: 1 }] : []),
      ],
      tags: tied
        ? ['tied']
        : [
            ...some(TAGS, 0.2),
            ...words(r, Math.floor(r() * 3))
              .split(' ')
              .filter(Boolean),
          ],
      countries: r() < 0.3 ? [] : some(COUNTRIES, 0.4),
      daily_avails: 1000 + Math.floor(r() * 100_000),
      ctr: 0.002,
    });
  }
  // Equal in float4, not in double: one name match (1) and five description matches (5 x 0.2f),
  // the former first in catalog order. Memory summing in double without the final float4 rounding
  // would put the latter first.
  for (const [id, name, description] of [
    ['okapi_name', 'Okapi', 'Quiet product.'],
    ['okapi_described', 'Quiet', 'okapi okapi okapi okapi okapi'],
  ]) {
    products.push({ ...products[1]!, product_id: id!, name: name!, description: description!, tags: [] });
  }
  return { products };
}

const BRIEFS = [
  'sports fans streaming live games',
  'sport',
  'shop',
  'luxury shoppers',
  'Tied sports fans',
  'tied',
  'new',
  'news',
  'okapi',
  'the of and', // stop words only: nothing matches by text
  'a', // no usable word: catalog order
  'new parents, family & pets!',
  'in-market auto intent',
  'high-value b2b buyers 2024',
  'café naïve über straße',
  '4k tv ev ai',
  'running run', // one lexeme as prefix and exact
  'cats dogs pets pet',
  'linear tv streaming audio podcast',
  'premium premium premium video',
  'zzzz nothing matches this',
  'SPORTS Fans',
  'ab½cd video', // the parser splits a word: a phrase query, ranked by the database
];
/** Briefs whose query memory does not rank (not a plain OR): the database answers. */
const ASKS_DATABASE = new Set(['ab½cd video']);

type Variant = Omit<ProductQuery, 'brief' | 'limit' | 'cursor'>;
const CATALOG = generated();
const id = (n: number) => CATALOG.products[n]!.product_id;
const IDS = CATALOG.products.map((p) => p.product_id);
const VARIANTS: Variant[] = [
  {},
  { channels: ['ctv', 'olv', 'linear_tv'] },
  { deliveryTypes: ['guaranteed'], countries: ['US'] },
  { formatIds: [{ agent_url: 'https://creative.example', id: 'video_30s' }] },
  { currencies: ['EUR', 'GBP'], fixedPrice: true },
  { fixedPrice: false, countries: ['JP', 'FR'], channels: ['display', 'social', 'search'] },
  { similarTo: [id(1), id(2)] },
  { similarTo: [id(3)], excludeIds: [id(5), id(6), id(7)], channels: ['ctv', 'olv'] },
  { similarTo: ['nope'] },
  { onlyIds: IDS.filter((_, i) => i % 7 === 0) },
  { onlyIds: [] },
  { excludeIds: IDS.filter((_, i) => i % 3 === 0) },
];

forEachDatabase<{ db: DatabasePort; inventory: MemoryInventory }>(
  'products ranking from memory equals the SQL ranking',
  async (adapter, schema) => {
    const db = await openDatabase(adapter, schema);
    await db.migrate('inventory-db', loadMigrations(join(import.meta.dir, '../../plugins/inventory-db/migrations')));
    await importCatalog(db, CATALOG);
    // Some positions shared by two products (as concurrent imports can leave them): product_id breaks the tie.
    await db.transaction(async (tx) => {
      await tx.query(sql`UPDATE inventory_products SET position = position - 1 WHERE position % 10 = 0`);
      await announceCatalogChange(tx);
    });
    return { db, inventory: new MemoryInventory(db) };
  },
  async ({ db }) => db.close(),
  (get) => {
    /** One page from memory as the Inventory port computes it (its copy proven current); null where it asks the database. */
    async function fromMemory(q: ProductQuery) {
      const { db, inventory } = get();
      const copy = await inventory.snapshot.get();
      const words = q.brief ? briefWords(q.brief) : [];
      const page = searchCatalog(copy, q, words, words.length ? await inventory.operands(briefQuery(words)) : []);
      const [v] = await db.query<{ version: string }>(sql`SELECT version::text AS version FROM inventory_catalog_version`);
      expect(v!.version).toBe(copy.version);
      return page;
    }

    /** Walks up to `pages` pages with memory's cursors; both sides must agree on every page. */
    async function compareWalk(q: ProductQuery, pages: number): Promise<'memory' | 'database'> {
      let cursor: string | undefined;
      for (let page = 0; page < pages; page++) {
        const paged = { ...q, ...(cursor ? { cursor } : {}) };
        const [memory, reference] = [await fromMemory(paged), await searchProducts(get().db, paged)];
        if (!memory) return 'database';
        expect({ brief: q.brief, page, ...memory }).toEqual({ brief: q.brief, page, ...reference });
        if (!reference.cursor) break;
        cursor = memory.cursor;
      }
      return 'memory';
    }

    test('every brief and filter: first pages equal, ties, totals and cursors included', async () => {
      const sides = new Map<string, string>();
      for (const brief of BRIEFS) {
        for (const variant of VARIANTS) sides.set(brief, await compareWalk({ ...variant, brief, limit: 50 }, 1));
      }
      for (const [brief, side] of sides) expect({ brief, side }).toEqual({ brief, side: ASKS_DATABASE.has(brief) ? 'database' : 'memory' });
      // No brief at all, and every filter: catalog order (or similarity).
      for (const variant of VARIANTS) expect(await compareWalk({ ...variant, limit: 50 }, 1)).toBe('memory');
    }, 300_000);

    test('200 random briefs (catalog words, prefixes, short words) with random filters and page sizes: equal', async () => {
      const r = rng(1717);
      let memory = 0;
      for (let i = 0; i < 200; i++) {
        const terms = words(r, 1 + Math.floor(r() * 6))
          .split(' ')
          .map((w) => (r() < 0.2 ? w.slice(0, 2 + Math.floor(r() * 4)) : w));
        const variant = VARIANTS[Math.floor(r() * VARIANTS.length)]!;
        if ((await compareWalk({ ...variant, brief: terms.join(' '), limit: 1 + Math.floor(r() * 100) }, 2)) === 'memory') memory++;
      }
      expect(memory).toBe(200);
    }, 300_000);

    test('page walks through big tie groups, to the end, stay equal', async () => {
      expect(await compareWalk({ brief: 'tied sports fans', limit: 37 }, 100)).toBe('memory');
      expect(await compareWalk({ brief: 'shop sport', limit: 100, countries: ['DE'] }, 50)).toBe('memory');
      expect(await compareWalk({ limit: 97, channels: ['ctv'] }, 100)).toBe('memory');
      expect(await compareWalk({ similarTo: [id(8)], limit: 250 }, 50)).toBe('memory');
    }, 300_000);

    test('past the last page: no products and a total of 0 on both sides; a foreign cursor fails on both', async () => {
      const q: ProductQuery = { brief: 'sport', limit: 10 };
      const past = { ...q, cursor: encodeCursor(COUNT * 2, fingerprint(q)) };
      const memory = await fromMemory(past);
      expect(memory).toEqual({ products: [], total: 0 });
      expect(memory).toEqual(await searchProducts(get().db, past));
      const foreign = { ...q, cursor: encodeCursor(10, fingerprint({ ...q, brief: 'shop' })) };
      await expect(fromMemory(foreign)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
      await expect(searchProducts(get().db, foreign)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    });

    test('the port answers as the reference, from memory or (for a phrase query) from the database; get reads the copy', async () => {
      const { db, inventory } = get();
      for (const brief of ['sport shop', 'ab½cd video']) {
        const q = { brief, limit: 20 };
        expect(await inventory.search(q)).toEqual(await searchProducts(db, q));
      }
      const found = await inventory.get([id(0), id(10), 'nope']);
      expect([...found.keys()].sort()).toEqual([id(0), id(10)].sort());
      expect(found.get(id(10))).toMatchObject({ product_id: id(10), name: CATALOG.products[10]!.name });
    });

    test('the data discriminates: the ranks of a broad brief are distinct as well as tied, float4 ties hold', async () => {
      const q = briefQuery(briefWords('sports fans streaming live games shop'));
      const ranks = await get().db.query<{ r: number }>(sql`
        SELECT ts_rank_cd(search, to_tsquery('english', ${q}::text))::float8 AS r FROM inventory_products WHERE search @@ to_tsquery('english', ${q}::text)`);
      const distinct = new Set(ranks.map((x) => x.r));
      expect(distinct.size).toBeGreaterThan(20);
      expect(distinct.size * 10).toBeLessThan(ranks.length);
      const okapi = await searchProducts(get().db, { brief: 'okapi', limit: 5 });
      expect(okapi.products.map((p) => p.product_id)).toEqual(['okapi_name', 'okapi_described']);
    });
  },
);
