import { sql, type SqlFragment } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ProductPage, ProductQuery, RankedProduct } from '../../core/ports/inventory.ts';
import { formatKey, PRODUCT_COLUMNS, toProduct, type ProductRow } from './catalog.ts';

/** Words of a brief; 4+ letter words also match as prefixes (`sport` finds `sports`). */
export function briefWords(brief: string): string[] {
  return [...new Set(brief.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].filter((w) => w.length > 1).slice(0, 32);
}

const tsQuery = (words: string[]) => words.map((w) => (w.length >= 4 ? `${w}:*` : w)).join(' | ');

/** Stable fingerprint of what a cursor pages through (not the page size). */
function fingerprint(q: ProductQuery): string {
  const { limit: _l, cursor: _c, ...rest } = q;
  return new Bun.CryptoHasher('sha256').update(JSON.stringify(rest)).digest('base64url').slice(0, 16);
}

const badCursor = () =>
  new ProtocolError('INVALID_REQUEST', 'pagination.cursor: not a cursor of this query; pass the cursor of the previous page unchanged', {
    field: 'pagination.cursor',
  });

function decodeCursor(raw: string, print: string): number {
  if (raw.length > 256 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw badCursor();
  try {
    const [offset, p] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (p !== print || !Number.isSafeInteger(offset) || offset < 1) throw badCursor();
    return offset;
  } catch {
    throw badCursor();
  }
}

const encodeCursor = (offset: number, print: string) => Buffer.from(JSON.stringify([offset, print])).toString('base64url');

/** Why a product matched: the brief's words found in its name, channels or tags. */
function relevance(words: string[], p: RankedProduct): string | undefined {
  const hay = new Set([...(`${p.name} ${p.tags.join(' ')} ${p.channels.join(' ')}`.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])]);
  const hits = words.filter((w) => hay.has(w) || [...hay].some((h) => w.length >= 4 && h.startsWith(w)));
  return hits.length ? `Matches ${hits.join(', ')}` : 'Matches the brief in its description';
}

/**
 * One query for ranking, filters and the page: text relevance of the brief (ts_rank_cd) plus
 * similarity to `similarTo` products (shared channels x2, shared tags), then catalog order and id,
 * so the order is total and an offset cursor pages it without repeats or gaps.
 */
export async function searchProducts(db: Queryable, q: ProductQuery): Promise<ProductPage> {
  const print = fingerprint(q);
  const offset = q.cursor ? decodeCursor(q.cursor, print) : 0;
  const words = q.brief ? briefWords(q.brief) : [];
  const where: SqlFragment[] = [sql`TRUE`];
  let rank = sql`0::float8`;
  if (words.length) {
    where.push(sql`search @@ to_tsquery('english', ${tsQuery(words)}::text)`);
    rank = sql`ts_rank_cd(search, to_tsquery('english', ${tsQuery(words)}::text))::float8`;
  }
  if (q.similarTo?.length) {
    const refs = sql`(SELECT array_agg(DISTINCT c) FROM inventory_products r, unnest(r.channels) c WHERE r.product_id = ANY(${q.similarTo}::text[]))`;
    const refTags = sql`(SELECT array_agg(DISTINCT t) FROM inventory_products r, unnest(r.tags) t WHERE r.product_id = ANY(${q.similarTo}::text[]))`;
    const similarity = sql`(2 * cardinality(ARRAY(SELECT unnest(channels) INTERSECT SELECT unnest(COALESCE(${refs}, '{}'::text[]))))
      + cardinality(ARRAY(SELECT unnest(tags) INTERSECT SELECT unnest(COALESCE(${refTags}, '{}'::text[])))))::float8`;
    rank = sql`(${rank} + ${similarity})`;
    where.push(sql`NOT (product_id = ANY(${q.similarTo}::text[]))`, sql`${similarity} > 0`);
  }
  if (q.onlyIds) where.push(sql`product_id = ANY(${q.onlyIds}::text[])`);
  if (q.excludeIds?.length) where.push(sql`NOT (product_id = ANY(${q.excludeIds}::text[]))`);
  if (q.channels?.length) where.push(sql`channels && ${q.channels}::text[]`);
  if (q.deliveryTypes?.length) where.push(sql`delivery_type = ANY(${q.deliveryTypes}::text[])`);
  if (q.countries?.length) where.push(sql`(cardinality(countries) = 0 OR countries && ${q.countries}::text[])`);
  if (q.formatIds?.length) where.push(sql`format_keys && ${q.formatIds.map(formatKey)}::text[]`);
  if (q.currencies?.length) where.push(sql`currencies && ${q.currencies}::text[]`);
  if (q.fixedPrice !== undefined) where.push(sql`has_fixed_price = ${q.fixedPrice}::boolean`);
  const rows = await db.query<ProductRow & { rank: number; total: number }>(sql`
    SELECT ${PRODUCT_COLUMNS}, ${rank} AS rank, count(*) OVER ()::int AS total
    FROM inventory_products WHERE ${sql.join(where, ' AND ')}
    ORDER BY rank DESC, position, product_id
    LIMIT ${q.limit + 1}::int OFFSET ${offset}::int`);
  const page = rows.slice(0, q.limit).map((r) => {
    const p: RankedProduct = toProduct(r);
    if (words.length) p.brief_relevance = relevance(words, p);
    return p;
  });
  const total = rows[0]?.total ?? 0;
  return { products: page, total, ...(rows.length > q.limit ? { cursor: encodeCursor(offset + q.limit, print) } : {}) };
}
