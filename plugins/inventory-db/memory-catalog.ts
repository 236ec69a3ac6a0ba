import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Product, ProductPage, ProductQuery, RankedProduct } from '../../core/ports/inventory.ts';
import { compareLexemes, lowerBound, matchingLexemes, parseTsvector, type QueryOperand } from '../../lib/text-search.ts';
import { formatKey, PRODUCT_COLUMNS, toProduct, type ProductRow } from './catalog.ts';
import { relevance } from './brief.ts';
import { decodeCursor, encodeCursor, fingerprint } from './cursor.ts';
import { lexemeWeight, rankCd } from './rank-cd.ts';

interface Entry {
  product: Product;
  /** Position in `ORDER BY position, product_id` (the database's collation orders ids, not JS). */
  order: number;
  /** Distinct channels and tags (similarity counts set intersections). */
  channels: string[];
  tags: string[];
  formatKeys: string[];
  currencies: string[];
  hasFixedPrice: boolean;
}

/** A product holding a lexeme, and what the lexeme adds to its rank there (lexemeWeight). */
interface Posting {
  entry: number;
  weight: number;
}

/** One instance's copy of the product catalog, as loaded at `version`. Read-only once loaded. */
export interface ProductCatalog {
  version: string;
  entries: Entry[];
  byId: Map<string, number>;
  /** Every lexeme of the catalog sorted as Postgres sorts them, and the postings of each (same index). */
  lexemes: string[];
  postings: Posting[][];
}

/** Read the version first: data read after it is at least that new, so an equal version later means no write since. */
export async function loadCatalog(db: Queryable): Promise<ProductCatalog> {
  const [v] = await db.query<{ version: string }>(sql`SELECT version::text AS version FROM inventory_catalog_version`);
  const rows = await db.query<ProductRow & { format_keys: string[]; currencies: string[]; has_fixed_price: boolean; search_text: string }>(sql`
    SELECT ${PRODUCT_COLUMNS}, format_keys, currencies, has_fixed_price, search::text AS search_text
    FROM inventory_products ORDER BY position, product_id`);
  const byLexeme = new Map<string, Posting[]>();
  const entries = rows.map((r, i): Entry => {
    for (const lexeme of parseTsvector(r.search_text)) {
      let list = byLexeme.get(lexeme.text);
      if (!list) byLexeme.set(lexeme.text, (list = []));
      list.push({ entry: i, weight: lexemeWeight(lexeme.weights) });
    }
    return {
      product: toProduct(r),
      order: i,
      channels: [...new Set(r.channels)],
      tags: [...new Set(r.tags)],
      formatKeys: r.format_keys,
      currencies: r.currencies,
      hasFixedPrice: r.has_fixed_price,
    };
  });
  const lexemes = [...byLexeme.keys()].sort(compareLexemes);
  return {
    version: v?.version ?? '',
    entries,
    byId: new Map(entries.map((e, i) => [e.product.product_id, i])),
    lexemes,
    postings: lexemes.map((l) => byLexeme.get(l)!),
  };
}

/** Largest value of a Postgres int (LIMIT and OFFSET are cast to int: larger ones fail there). */
const INT4_MAX = 2 ** 31 - 1;

interface Candidate {
  entry: Entry;
  rank: number;
}

/** ORDER BY rank DESC, position, product_id (a total order: `order` is unique). */
const compare = (a: Candidate, b: Candidate) => (a.rank === b.rank ? a.entry.order - b.entry.order : a.rank > b.rank ? -1 : 1);

/** Insert `c` into `best` (sorted by compare, at most `keep` long) when it ranks among the first `keep`. */
function keepBest(best: Candidate[], c: Candidate, keep: number): void {
  if (best.length === keep && compare(c, best[keep - 1]!) >= 0) return;
  best.splice(lowerBound(best, c, compare), 0, c);
  if (best.length > keep) best.pop();
}

const overlaps = (values: readonly string[], set: Set<string> | null) => set === null || values.some((x) => set.has(x));
const setOf = (values: readonly string[] | undefined) => (values?.length ? new Set(values) : null);

/**
 * One page as searchProducts ranks, filters and pages it, from a copy. `words` are the brief's
 * (briefWords), `operands` their query's as the database parses it (orQueryOperands); null when
 * memory does not reproduce the search (a query that is not a plain OR, a page outside what the
 * database accepts): the caller then asks the database. A bad cursor fails as it does there.
 */
export function searchCatalog(c: ProductCatalog, q: ProductQuery, words: readonly string[], operands: readonly QueryOperand[] | null): ProductPage | null {
  if (words.length && operands === null) return null;
  if (!Number.isSafeInteger(q.limit) || q.limit < 0 || q.limit >= INT4_MAX) return null;
  const print = fingerprint(q);
  const offset = q.cursor ? decodeCursor(q.cursor, print) : 0;
  if (offset > INT4_MAX) return null;

  // Text relevance: per matching product, the weights of its matched lexemes (each lexeme once, however many operands match it).
  let sums: Map<number, number> | null = null;
  if (words.length) {
    sums = new Map();
    const seen = new Set<number>();
    for (const o of operands!) {
      for (const lexeme of matchingLexemes(c.lexemes, o)) {
        if (seen.has(lexeme)) continue;
        seen.add(lexeme);
        for (const p of c.postings[lexeme]!) sums.set(p.entry, (sums.get(p.entry) ?? 0) + p.weight);
      }
    }
  }

  // Similarity to `similarTo`: the distinct channels and tags of those products.
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

  const only = q.onlyIds ? new Set(q.onlyIds) : null;
  const excluded = setOf(q.excludeIds);
  const channels = setOf(q.channels);
  const deliveryTypes = setOf(q.deliveryTypes);
  const countries = setOf(q.countries);
  const formats = q.formatIds?.length ? new Set(q.formatIds.map(formatKey)) : null;
  const currencies = setOf(q.currencies);

  // Only what the page needs is kept in order (and one more, to tell whether more follow).
  const keep = offset + q.limit + 1;
  const best: Candidate[] = [];
  const all: Candidate[] = [];
  const sortLater = keep >= c.entries.length;
  let matches = 0;
  const consider = (i: number) => {
    const e = c.entries[i]!;
    const p = e.product;
    if (only && !only.has(p.product_id)) return;
    if (excluded?.has(p.product_id)) return;
    if (!overlaps(e.channels, channels)) return;
    if (deliveryTypes && !deliveryTypes.has(p.delivery_type)) return;
    if (countries && p.countries.length && !overlaps(p.countries, countries)) return;
    if (!overlaps(e.formatKeys, formats)) return;
    if (!overlaps(e.currencies, currencies)) return;
    if (q.fixedPrice !== undefined && e.hasFixedPrice !== q.fixedPrice) return;
    let rank = 0;
    if (sums) rank = rankCd(sums.get(i)!);
    if (similar) {
      if (similar.ids.has(p.product_id)) return;
      let similarity = 0;
      for (const x of e.channels) if (similar.channels.has(x)) similarity += 2;
      for (const x of e.tags) if (similar.tags.has(x)) similarity++;
      if (!(similarity > 0)) return;
      rank += similarity;
    }
    matches++;
    if (sortLater) all.push({ entry: e, rank });
    else keepBest(best, { entry: e, rank }, keep);
  };
  if (sums) for (const i of sums.keys()) consider(i);
  else for (let i = 0; i < c.entries.length; i++) consider(i);
  const ordered = sortLater ? all.sort(compare) : best;

  const rows = ordered.slice(offset, keep);
  const page = rows.slice(0, q.limit).map(({ entry }) => {
    const p: RankedProduct = { ...entry.product };
    if (words.length) p.brief_relevance = relevance(words, p);
    return p;
  });
  // The database counts matches beside the rows it returns: none past the last page.
  return { products: page, total: rows.length ? matches : 0, ...(rows.length > q.limit ? { cursor: encodeCursor(offset + q.limit, print) } : {}) };
}

/** The products among `ids` that the copy holds. */
export function productsOf(c: ProductCatalog, ids: readonly string[]): Map<string, Product> {
  const out = new Map<string, Product>();
  for (const id of ids) {
    const i = c.byId.get(id);
    if (i !== undefined) out.set(id, c.entries[i]!.product);
  }
  return out;
}
