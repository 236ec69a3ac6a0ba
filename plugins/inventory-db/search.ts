import { sql, type SqlFragment } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ProductPage, ProductQuery, RankedProduct } from '../../core/ports/inventory.ts';
import { formatKey, PRODUCT_COLUMNS, toProduct, type ProductRow } from './catalog.ts';
import { briefQuery, briefWords, relevance } from './brief.ts';
import { decodeCursor, encodeCursor, fingerprint } from './cursor.ts';

/**
 * One query for ranking, filters and the page: text relevance of the brief (ts_rank_cd) plus
 * similarity to `similarTo` products (shared channels x2, shared tags), then catalog order and id,
 * so the order is total and an offset cursor pages it without repeats or gaps.
 * The reference ranking: the Inventory port answers from memory (memory-catalog.ts) and falls back
 * to this for what memory does not reproduce; test/sales/memory-ranking.test.ts holds both equal.
 */
export async function searchProducts(db: Queryable, q: ProductQuery): Promise<ProductPage> {
  const print = fingerprint(q);
  const offset = q.cursor ? decodeCursor(q.cursor, print) : 0;
  const words = q.brief ? briefWords(q.brief) : [];
  const where: SqlFragment[] = [sql`TRUE`];
  let rank = sql`0::float8`;
  if (words.length) {
    where.push(sql`search @@ to_tsquery('english', ${briefQuery(words)}::text)`);
    rank = sql`ts_rank_cd(search, to_tsquery('english', ${briefQuery(words)}::text))::float8`;
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
