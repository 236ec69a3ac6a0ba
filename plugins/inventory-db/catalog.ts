import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { parseOrThrow } from '../../core/validation.ts';
import { normalizeAgentUrl } from '../../lib/urls.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { FormatRef, Product } from '../../core/ports/inventory.ts';
import { CHANNELS } from '../../lib/adcp/channels.ts';
import { DOMAIN_PATTERN } from '../../lib/adcp/patterns.ts';

const id = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'));
const money = v.pipe(v.number(), v.minValue(0));
const currency = v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code'));

const formatId = v.object({
  agent_url: v.pipe(v.string(), v.url('must be an absolute URL')),
  id: v.pipe(v.string(), v.regex(/^[a-zA-Z0-9_-]+$/, 'must match ^[a-zA-Z0-9_-]+$')),
});

const pricingOption = v.pipe(
  v.object({
    pricing_option_id: id,
    pricing_model: v.picklist(['cpm', 'vcpm', 'cpc', 'cpcv', 'cpv', 'flat_rate']),
    currency,
    fixed_price: v.optional(money),
    floor_price: v.optional(money),
    min_spend_per_package: v.optional(money),
  }),
  v.check((p) => (p.fixed_price === undefined) !== (p.floor_price === undefined), 'give exactly one of fixed_price and floor_price'),
);

const selector = v.variant('selection_type', [
  v.object({ publisher_domain: v.pipe(v.string(), v.regex(DOMAIN_PATTERN)), selection_type: v.literal('all') }),
  v.object({
    publisher_domain: v.pipe(v.string(), v.regex(DOMAIN_PATTERN)),
    selection_type: v.literal('by_id'),
    property_ids: v.pipe(v.array(id), v.minLength(1)),
  }),
  v.object({
    publisher_domain: v.pipe(v.string(), v.regex(DOMAIN_PATTERN)),
    selection_type: v.literal('by_tag'),
    property_tags: v.pipe(v.array(id), v.minLength(1)),
  }),
]);

/** One product of a catalog file (the seed format, also what `bun run sales import` reads). */
export const catalogProduct = v.object({
  product_id: id,
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  description: v.pipe(v.string(), v.minLength(1), v.maxLength(4000)),
  publisher_properties: v.pipe(v.array(selector), v.minLength(1)),
  channels: v.pipe(v.array(v.picklist(CHANNELS)), v.minLength(1)),
  delivery_type: v.picklist(['guaranteed', 'non_guaranteed']),
  format_ids: v.optional(v.array(formatId), []),
  pricing_options: v.pipe(
    v.array(pricingOption),
    v.minLength(1),
    v.check((list) => new Set(list.map((p) => p.pricing_option_id)).size === list.length, 'pricing_option_id values must be unique'),
  ),
  tags: v.optional(v.array(v.pipe(v.string(), v.maxLength(64))), []),
  countries: v.optional(v.array(v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code'))), []),
  daily_avails: v.pipe(v.number(), v.integer(), v.minValue(1)),
  ctr: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1)), 0.002),
});

export const catalogFile = v.object({
  products: v.pipe(
    v.array(catalogProduct),
    v.check((list) => new Set(list.map((p) => p.product_id)).size === list.length, 'product_id values must be unique'),
  ),
});

export type CatalogProduct = v.InferOutput<typeof catalogProduct>;

export const formatKey = (f: FormatRef) => `${normalizeAgentUrl(f.agent_url) ?? f.agent_url}#${f.id}`;

/**
 * Channel of catalog change notifications, per schema so deployments sharing one database in
 * different schemas do not reload each other's catalogs (a channel name is at most 63 bytes).
 */
export const CATALOG_CHANNEL = sql.raw(`'inventory_catalog_' || left(md5(current_schema()), 16)`);

/**
 * Announce a write of inventory_products inside the writing transaction: bumps the catalog version
 * (every answer from memory is checked against it) and notifies every instance on commit, so each
 * reloads its copy. Every writer of inventory_products calls it.
 */
export async function announceCatalogChange(tx: Queryable): Promise<void> {
  await tx.query(sql`
    WITH v AS (UPDATE inventory_catalog_version SET version = version + 1 RETURNING version)
    SELECT pg_notify(${CATALOG_CHANNEL}, v.version::text) FROM v`);
}

/** Validate a catalog file and upsert every product (catalog order = file order). */
export async function importCatalog(db: DatabasePort, raw: unknown): Promise<{ products: number }> {
  const file = parseOrThrow(catalogFile, raw);
  await db.transaction(async (tx) => {
    const [row] = await tx.query<{ n: number }>(sql`SELECT COALESCE(max(position), 0)::int AS n FROM inventory_products`);
    let position = row!.n;
    for (const p of file.products) await upsertProduct(tx, p, ++position);
    await announceCatalogChange(tx);
  });
  return { products: file.products.length };
}

/** Upsert one product; runs inside a transaction that also calls announceCatalogChange. */
export async function upsertProduct(tx: Queryable, p: CatalogProduct, position: number): Promise<void> {
  const currencies = [...new Set(p.pricing_options.map((o) => o.currency))];
  const hasFixed = p.pricing_options.some((o) => o.fixed_price !== undefined);
  await tx.query(sql`
    INSERT INTO inventory_products (product_id, name, description, publisher_properties, channels, delivery_type, format_ids, format_keys,
      pricing_options, currencies, has_fixed_price, tags, countries, daily_avails, ctr, position, updated_at)
    VALUES (${p.product_id}::text, ${p.name}::text, ${p.description}::text, ${p.publisher_properties}::jsonb, ${p.channels}::text[],
      ${p.delivery_type}::text, ${p.format_ids}::jsonb, ${p.format_ids.map(formatKey)}::text[], ${p.pricing_options}::jsonb,
      ${currencies}::text[], ${hasFixed}::boolean, ${p.tags}::text[], ${p.countries}::text[], ${p.daily_avails}::bigint, ${p.ctr}::numeric,
      ${position}::int, now())
    ON CONFLICT (product_id) DO UPDATE SET
      name = EXCLUDED.name, description = EXCLUDED.description, publisher_properties = EXCLUDED.publisher_properties,
      channels = EXCLUDED.channels, delivery_type = EXCLUDED.delivery_type, format_ids = EXCLUDED.format_ids,
      format_keys = EXCLUDED.format_keys, pricing_options = EXCLUDED.pricing_options, currencies = EXCLUDED.currencies,
      has_fixed_price = EXCLUDED.has_fixed_price, tags = EXCLUDED.tags, countries = EXCLUDED.countries,
      daily_avails = EXCLUDED.daily_avails, ctr = EXCLUDED.ctr, updated_at = now()`);
}

export async function countProducts(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM inventory_products`);
  return row?.n ?? 0;
}

export interface ProductRow {
  product_id: string;
  name: string;
  description: string;
  publisher_properties: Product['publisher_properties'];
  channels: string[];
  delivery_type: Product['delivery_type'];
  format_ids: FormatRef[];
  pricing_options: Product['pricing_options'];
  tags: string[];
  countries: string[];
  daily_avails: string | number;
  ctr: string | number;
}

export const PRODUCT_COLUMNS = sql.raw(
  'product_id, name, description, publisher_properties, channels, delivery_type, format_ids, pricing_options, tags, countries, daily_avails, ctr',
);

export function toProduct(r: ProductRow): Product {
  return {
    product_id: r.product_id,
    name: r.name,
    description: r.description,
    publisher_properties: r.publisher_properties,
    channels: r.channels,
    delivery_type: r.delivery_type,
    format_ids: r.format_ids,
    pricing_options: r.pricing_options,
    tags: r.tags,
    countries: r.countries,
    daily_avails: Number(r.daily_avails),
    ctr: Number(r.ctr),
  };
}
