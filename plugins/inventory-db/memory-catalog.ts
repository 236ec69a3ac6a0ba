import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Product, ProductPage, ProductQuery, RankedProduct } from '../../core/ports/inventory.ts';
import type { Ranking, TextIndex } from '../../lib/text-index.ts';
import { keepBest } from '../../lib/keep-best.ts';
import { formatKey, toProduct, type ProductRow } from './catalog.ts';
import { briefWords, relevance } from './brief.ts';
import { decodeCursor, encodeCursor, fingerprint } from './cursor.ts';
import { productIndex } from './product-index.ts';
import { BuiltProducts } from './built-products.ts';
import { publisherDomains } from '../../lib/adcp/publisher-domains.ts';
import { CompactRows, valueAt, type Column, type RawRow } from '../../lib/compact-rows.ts';

/** A product row as a copy holds it, with what the filters read. */
type StoredProduct = ProductRow & { format_keys: string[]; currencies: string[]; has_fixed_price: boolean; seeded_by: string | null };

/** One instance's copy of the product catalog, as loaded at `version`, with its text index. Read-only once loaded. */
export interface ProductCatalog {
  version: string;
  /** The products in catalog order (`position`, then product_id): a product's position here is its entry in the index. */
  products: CompactRows<StoredProduct>;
  /** Per product, its distinct channels and tags (similarity counts set intersections) and the publishers whose inventory it sells (lowercase domains). */
  channels: Column<string[]>;
  tags: Column<string[]>;
  domains: Column<string[]>;
  index: TextIndex<StoredProduct>;
  /** The products answers named, built once per copy. */
  built: BuiltProducts;
}

/** The text fields of a product: no other product shares them. */
const TEXTS = ['product_id', 'name', 'description'] as const;
/** The fields read as JSON text. */
const JSON_FIELDS = ['publisher_properties', 'channels', 'format_ids', 'pricing_options', 'tags', 'countries', 'format_keys', 'currencies'] as const;
type Raw = RawRow<StoredProduct, (typeof JSON_FIELDS)[number]>;

/** A field's distinct values mapped (each once). */
const mapped = <V, T>(column: Column<V>, f: (value: V) => T): Column<T> => ({ codes: column.codes, values: column.values.map(f) });

/**
 * Read the version first: data read after it is at least that new, so an equal version later
 * means no write since. Numbers as float8 (exact for these columns): held as numbers, not strings.
 */
export async function loadCatalog(db: Queryable): Promise<ProductCatalog> {
  const [v] = await db.query<{ version: string }>(sql`SELECT version::text AS version FROM inventory_catalog_version`);
  const rows = await db.query<Raw>(sql`
    SELECT product_id, name, description, publisher_properties::text AS publisher_properties, to_jsonb(channels)::text AS channels,
      delivery_type, format_ids::text AS format_ids, pricing_options::text AS pricing_options, to_jsonb(tags)::text AS tags,
      to_jsonb(countries)::text AS countries, daily_avails::float8 AS daily_avails, ctr::float8 AS ctr,
      to_jsonb(format_keys)::text AS format_keys, to_jsonb(currencies)::text AS currencies, has_fixed_price, seeded_by
    FROM inventory_products
    -- Catalog order; ids are ASCII, compared as bytes whatever the database's collation.
    ORDER BY position, product_id COLLATE "C"`);
  const products = new CompactRows<StoredProduct, (typeof JSON_FIELDS)[number]>(rows, { texts: TEXTS, unique: ['product_id'], json: JSON_FIELDS });
  const [channels, tags] = [products.column('channels'), products.column('tags')];
  return {
    version: v?.version ?? '',
    products,
    channels: mapped(channels, (x) => [...new Set(x)]),
    tags: mapped(tags, (x) => [...new Set(x)]),
    domains: mapped(products.column('publisher_properties'), (x) => publisherDomains({ publisher_properties: x })),
    index: productIndex(rows.length, (i) => ({
      name: rows[i]!.name,
      channels: valueAt(channels, i),
      tags: valueAt(tags, i),
      description: rows[i]!.description,
    })),
    built: builtFrom(products),
  };
}

/**
 * Made outside loadCatalog: a function made there shares its scope with the index's reader of the
 * raw rows, and a copy keeping it would keep every raw row (at 100k products, ~1.2M strings) alive.
 */
const builtFrom = (products: ProductCatalog['products']) => new BuiltProducts((i) => toProduct(products.row(i)));

/** The product at `position` of a copy (shared: read-only). */
export const productAt = (c: ProductCatalog, position: number): Product => c.built.product(position);

/** A matching product (its position, which is catalog order) and its score. */
interface Candidate {
  position: number;
  rank: number;
}

/** Score, then catalog order: a total order (positions are unique), which offset cursors page without repeats or gaps. */
const compare = (a: Candidate, b: Candidate) => (a.rank === b.rank ? a.position - b.position : a.rank > b.rank ? -1 : 1);

const overlaps = (values: readonly string[], set: Set<string> | null) => set === null || values.some((x) => set.has(x));
const setOf = (values: readonly string[] | undefined) => (values?.length ? new Set(values) : null);

/**
 * Most matches a search counts for `total`: past it the count is left out (`total_count` is
 * optional in AdCP), so a broad search reads its page and this many more, not every match. A
 * property of the query, not of the page: every page of a query has it or none does.
 */
export const MAX_COUNTED = 1000;

/** The positions of the products named by `ids` that the copy holds. */
function positionsOf(c: ProductCatalog, ids: readonly string[]): Set<number> {
  const out = new Set<number>();
  for (const id of ids) {
    const i = c.products.find('product_id', id);
    if (i !== undefined) out.add(i);
  }
  return out;
}

/** Whether the product at a position passes the query's filters (not the brief: the walk only visits its matches). */
function filterOf(c: ProductCatalog, q: ProductQuery): (i: number) => boolean {
  const only = q.onlyIds ? positionsOf(c, q.onlyIds) : null;
  const excluded = q.excludeIds?.length ? positionsOf(c, q.excludeIds) : null;
  const channels = setOf(q.channels);
  const deliveryTypes = setOf(q.deliveryTypes);
  const countries = setOf(q.countries);
  const formats = q.formatIds?.length ? new Set(q.formatIds.map(formatKey)) : null;
  const currencies = setOf(q.currencies);
  const publishers = q.publisherDomains ? new Set(q.publisherDomains) : null;
  const p = c.products;
  const [seededBy, deliveryType, where, formatKeys, currency, fixedPrice] = [
    p.column('seeded_by'),
    p.column('delivery_type'),
    p.column('countries'),
    p.column('format_keys'),
    p.column('currencies'),
    p.column('has_fixed_price'),
  ] as const;
  return (i) => {
    const seeder = valueAt(seededBy, i);
    if (q.viewer !== undefined && seeder !== null && seeder !== q.viewer) return false;
    if (only && !only.has(i)) return false;
    if (excluded?.has(i)) return false;
    if (!overlaps(valueAt(c.channels, i), channels)) return false;
    if (deliveryTypes && !deliveryTypes.has(valueAt(deliveryType, i))) return false;
    const sold = valueAt(where, i);
    if (countries && sold.length && !overlaps(sold, countries)) return false;
    if (!overlaps(valueAt(formatKeys, i), formats)) return false;
    if (!overlaps(valueAt(currency, i), currencies)) return false;
    if (!overlaps(valueAt(c.domains, i), publishers)) return false;
    if (q.fixedPrice !== undefined && valueAt(fixedPrice, i) !== q.fixedPrice) return false;
    return true;
  };
}

/** The ranked entries from `from` to `to` (exclusive) of the query's order, and how many match: all of them, or more than MAX_COUNTED. */
interface Walk {
  rows: Candidate[];
  matches: number;
}

/**
 * Ranked by the brief alone (or catalog order without one): the brief's ranking (or the catalog)
 * is already in that order, so the walk reads it from the top and stops once the page is full and
 * the count past MAX_COUNTED; nothing is kept but the page.
 */
function walkInOrder(c: ProductCatalog, ranking: Ranking | null, passes: (i: number) => boolean, from: number, to: number): Walk {
  const rows: Candidate[] = [];
  const n = ranking ? ranking.size : c.products.size;
  let matches = 0;
  for (let k = 0; k < n && (matches < to || matches <= MAX_COUNTED); k++) {
    const i = ranking ? ranking.positions[k]! : k;
    if (!passes(i)) continue;
    if (matches >= from && matches < to) rows.push({ position: i, rank: ranking ? ranking.scores[k]! : 0 });
    matches++;
  }
  return { rows, matches };
}

/**
 * Ranked with similarity to `similarTo` products (refine `more_like_this`: shared channels x2,
 * shared tags) added to the brief's score, or only among named products (`include`): every
 * candidate is scored, the best `to` kept in order.
 */
function walkScored(c: ProductCatalog, q: ProductQuery, ranking: Ranking | null, passes: (i: number) => boolean, from: number, to: number): Walk {
  let similar: { positions: Set<number>; channels: Set<string>; tags: Set<string> } | null = null;
  if (q.similarTo?.length) {
    similar = { positions: positionsOf(c, q.similarTo), channels: new Set(), tags: new Set() };
    for (const i of similar.positions) {
      for (const x of valueAt(c.channels, i)) similar.channels.add(x);
      for (const x of valueAt(c.tags, i)) similar.tags.add(x);
    }
  }
  const best: Candidate[] = [];
  // A page reaching past the catalog's size: every candidate is kept, and sorted once at the end.
  const sortLater = to >= c.products.size;
  let matches = 0;
  const consider = (i: number, text: number) => {
    if (!passes(i)) return;
    let rank = text;
    if (similar) {
      if (similar.positions.has(i)) return;
      let similarity = 0;
      for (const x of valueAt(c.channels, i)) if (similar.channels.has(x)) similarity += 2;
      for (const x of valueAt(c.tags, i)) if (similar.tags.has(x)) similarity++;
      if (!(similarity > 0)) return;
      rank += similarity;
    }
    matches++;
    if (sortLater) best.push({ position: i, rank });
    else keepBest(best, { position: i, rank }, to, compare);
  };
  if (q.onlyIds && !similar) {
    // The named products only: looked up, not searched for (a brief still ranks them, and leaves out those it does not match).
    for (const i of positionsOf(c, q.onlyIds)) {
      const text = ranking ? ranking.scoreOf(i) : 0;
      if (text !== undefined) consider(i, text);
    }
  } else if (ranking) for (let k = 0; k < ranking.size; k++) consider(ranking.positions[k]!, ranking.scores[k]!);
  else for (let i = 0; i < c.products.size; i++) consider(i, 0);
  if (sortLater) best.sort(compare);
  return { rows: best.slice(from, to), matches };
}

/**
 * One page of a search from a copy: text score of the brief (the copy's index, product-index.ts)
 * plus similarity to `similarTo` products, then catalog order; filtered, and paged by offset.
 * `total` is the number of matches when at most MAX_COUNTED, else absent. A bad cursor is
 * INVALID_REQUEST.
 */
export function searchCatalog(c: ProductCatalog, q: ProductQuery): ProductPage {
  const print = fingerprint(q);
  const offset = q.cursor ? decodeCursor(q.cursor, print) : 0;
  const words = q.brief ? briefWords(q.brief) : [];
  // Text relevance: the products matching a word of the brief, best first.
  const ranking = words.length ? c.index.rank(q.brief!) : null;
  const passes = filterOf(c, q);
  // The page's rows, and one more to tell whether more follow.
  const to = offset + q.limit + 1;
  const { rows, matches } = q.similarTo?.length || q.onlyIds ? walkScored(c, q, ranking, passes, offset, to) : walkInOrder(c, ranking, passes, offset, to);
  const page = rows.slice(0, q.limit).map(({ position }): RankedProduct => {
    const p = productAt(c, position);
    return words.length ? { ...p, brief_relevance: relevance(words, c.built.words(position)) } : p;
  });
  // Counted beside the rows returned: none past the last page.
  const total = rows.length === 0 ? 0 : matches <= MAX_COUNTED ? matches : undefined;
  return {
    products: page,
    ...(total !== undefined ? { total } : {}),
    ...(rows.length > q.limit ? { cursor: encodeCursor(offset + q.limit, print) } : {}),
  };
}

/** The products among `ids` that the copy holds and `viewer` may see (undefined: all). */
export function productsOf(c: ProductCatalog, ids: readonly string[], viewer: string | undefined): Map<string, Product> {
  const out = new Map<string, Product>();
  const seededBy = c.products.column('seeded_by');
  for (const id of ids) {
    const i = c.products.find('product_id', id);
    if (i === undefined) continue;
    const seeder = valueAt(seededBy, i);
    if (viewer === undefined || seeder === null || seeder === viewer) out.set(id, productAt(c, i));
  }
  return out;
}
