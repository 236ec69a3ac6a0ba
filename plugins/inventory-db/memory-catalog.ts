import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Product, ProductPage, ProductQuery, RankedProduct } from '../../core/ports/inventory.ts';
import type { Ranking, TextIndex } from '../../lib/text-index.ts';
import { keepBest } from '../../lib/keep-best.ts';
import { formatKey, PRODUCT_COLUMNS, toProduct, type ProductRow } from './catalog.ts';
import { briefWords, relevance } from './brief.ts';
import { decodeCursor, encodeCursor, fingerprint } from './cursor.ts';
import { productIndex } from './product-index.ts';
import { publisherDomains } from '../../lib/adcp/publisher-domains.ts';
import { SharedValues } from '../../lib/shared-values.ts';

interface Entry {
  product: Product;
  /** Position in catalog order (`position`, then product_id). */
  order: number;
  /** Distinct channels and tags (similarity counts set intersections). */
  channels: string[];
  tags: string[];
  formatKeys: string[];
  currencies: string[];
  hasFixedPrice: boolean;
  /** The publishers whose inventory the product sells (lowercase domains). */
  domains: string[];
  /** The caller who seeded this sandbox fixture (comply_test_controller seed_product); null: the seller's own product. */
  seededBy: string | null;
}

/** One instance's copy of the product catalog, as loaded at `version`, with its text index. Read-only once loaded. */
export interface ProductCatalog {
  version: string;
  entries: Entry[];
  byId: Map<string, number>;
  index: TextIndex<Product>;
}

/** The fields of a product that no other product shares. */
const OWN_FIELDS = new Set(['product_id', 'name', 'description']);

/** Read the version first: data read after it is at least that new, so an equal version later means no write since. */
export async function loadCatalog(db: Queryable): Promise<ProductCatalog> {
  const [v] = await db.query<{ version: string }>(sql`SELECT version::text AS version FROM inventory_catalog_version`);
  const rows = await db.query<
    ProductRow & { position: number; format_keys: string[]; currencies: string[]; has_fixed_price: boolean; seeded_by: string | null }
  >(sql`
    SELECT ${PRODUCT_COLUMNS}, position, format_keys, currencies, has_fixed_price, seeded_by FROM inventory_products`);
  // Ids are ASCII: code unit order is byte order, whatever the database's collation.
  rows.sort((a, b) => a.position - b.position || (a.product_id < b.product_id ? -1 : a.product_id > b.product_id ? 1 : 0));
  // Rows repeat their channels, tags, formats and prices: one instance of each (fewer cells for the collector to mark).
  const shared = new SharedValues();
  const entries = rows.map(
    (r, i): Entry => ({
      product: shared.fields(toProduct(r), OWN_FIELDS),
      order: i,
      channels: shared.of([...new Set(r.channels)]),
      tags: shared.of([...new Set(r.tags)]),
      formatKeys: shared.of(r.format_keys),
      currencies: shared.of(r.currencies),
      hasFixedPrice: r.has_fixed_price,
      seededBy: shared.of(r.seeded_by),
      domains: shared.of(publisherDomains(r)),
    }),
  );
  return {
    version: v?.version ?? '',
    entries,
    byId: new Map(entries.map((e, i) => [e.product.product_id, i])),
    index: productIndex(entries.map((e) => e.product)),
  };
}

interface Candidate {
  entry: Entry;
  rank: number;
}

/** Score, then catalog order: a total order (`order` is unique), which offset cursors page without repeats or gaps. */
const compare = (a: Candidate, b: Candidate) => (a.rank === b.rank ? a.entry.order - b.entry.order : a.rank > b.rank ? -1 : 1);

const overlaps = (values: readonly string[], set: Set<string> | null) => set === null || values.some((x) => set.has(x));
const setOf = (values: readonly string[] | undefined) => (values?.length ? new Set(values) : null);

/**
 * Most matches a search counts for `total`: past it the count is left out (`total_count` is
 * optional in AdCP), so a broad search reads its page and this many more, not every match. A
 * property of the query, not of the page: every page of a query has it or none does.
 */
export const MAX_COUNTED = 1000;

/** Whether an entry passes the query's filters (not the brief: the walk only visits its matches). */
function filterOf(c: ProductCatalog, q: ProductQuery): (e: Entry) => boolean {
  const only = q.onlyIds ? new Set(q.onlyIds) : null;
  const excluded = setOf(q.excludeIds);
  const channels = setOf(q.channels);
  const deliveryTypes = setOf(q.deliveryTypes);
  const countries = setOf(q.countries);
  const formats = q.formatIds?.length ? new Set(q.formatIds.map(formatKey)) : null;
  const currencies = setOf(q.currencies);
  const publishers = q.publisherDomains ? new Set(q.publisherDomains) : null;
  return (e) => {
    const p = e.product;
    if (q.viewer !== undefined && e.seededBy !== null && e.seededBy !== q.viewer) return false;
    if (only && !only.has(p.product_id)) return false;
    if (excluded?.has(p.product_id)) return false;
    if (!overlaps(e.channels, channels)) return false;
    if (deliveryTypes && !deliveryTypes.has(p.delivery_type)) return false;
    if (countries && p.countries.length && !overlaps(p.countries, countries)) return false;
    if (!overlaps(e.formatKeys, formats)) return false;
    if (!overlaps(e.currencies, currencies)) return false;
    if (!overlaps(e.domains, publishers)) return false;
    if (q.fixedPrice !== undefined && e.hasFixedPrice !== q.fixedPrice) return false;
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
function walkInOrder(c: ProductCatalog, ranking: Ranking | null, passes: (e: Entry) => boolean, from: number, to: number): Walk {
  const rows: Candidate[] = [];
  const n = ranking ? ranking.size : c.entries.length;
  let matches = 0;
  for (let k = 0; k < n && (matches < to || matches <= MAX_COUNTED); k++) {
    const e = c.entries[ranking ? ranking.positions[k]! : k]!;
    if (!passes(e)) continue;
    if (matches >= from && matches < to) rows.push({ entry: e, rank: ranking ? ranking.scores[k]! : 0 });
    matches++;
  }
  return { rows, matches };
}

/**
 * Ranked with similarity to `similarTo` products (refine `more_like_this`: shared channels x2,
 * shared tags) added to the brief's score, or only among named products (`include`): every
 * candidate is scored, the best `to` kept in order.
 */
function walkScored(c: ProductCatalog, q: ProductQuery, ranking: Ranking | null, passes: (e: Entry) => boolean, from: number, to: number): Walk {
  let similar: { ids: Set<string>; channels: Set<string>; tags: Set<string> } | null = null;
  if (q.similarTo?.length) {
    similar = { ids: new Set(q.similarTo), channels: new Set(), tags: new Set() };
    for (const id of similar.ids) {
      const i = c.byId.get(id);
      if (i === undefined) continue;
      for (const x of c.entries[i]!.channels) similar.channels.add(x);
      for (const x of c.entries[i]!.tags) similar.tags.add(x);
    }
  }
  const best: Candidate[] = [];
  // A page reaching past the catalog's size: every candidate is kept, and sorted once at the end.
  const sortLater = to >= c.entries.length;
  let matches = 0;
  const consider = (i: number, text: number) => {
    const e = c.entries[i]!;
    if (!passes(e)) return;
    let rank = text;
    if (similar) {
      if (similar.ids.has(e.product.product_id)) return;
      let similarity = 0;
      for (const x of e.channels) if (similar.channels.has(x)) similarity += 2;
      for (const x of e.tags) if (similar.tags.has(x)) similarity++;
      if (!(similarity > 0)) return;
      rank += similarity;
    }
    matches++;
    if (sortLater) best.push({ entry: e, rank });
    else keepBest(best, { entry: e, rank }, to, compare);
  };
  if (q.onlyIds && !similar) {
    // The named products only: looked up, not searched for (a brief still ranks them, and leaves out those it does not match).
    for (const i of new Set(q.onlyIds.map((id) => c.byId.get(id)))) {
      if (i === undefined) continue;
      const text = ranking ? ranking.scoreOf(i) : 0;
      if (text !== undefined) consider(i, text);
    }
  } else if (ranking) for (let k = 0; k < ranking.size; k++) consider(ranking.positions[k]!, ranking.scores[k]!);
  else for (let i = 0; i < c.entries.length; i++) consider(i, 0);
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
  const page = rows.slice(0, q.limit).map(({ entry }) => {
    const p: RankedProduct = { ...entry.product };
    if (words.length) p.brief_relevance = relevance(words, p);
    return p;
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
  for (const id of ids) {
    const i = c.byId.get(id);
    if (i === undefined) continue;
    const e = c.entries[i]!;
    if (viewer === undefined || e.seededBy === null || e.seededBy === viewer) out.set(id, e.product);
  }
  return out;
}
