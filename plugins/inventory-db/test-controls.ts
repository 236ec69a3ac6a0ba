import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { parseOrThrow } from '../../core/validation.ts';
import { ProtocolError } from '../../core/errors.ts';
import { defineScenario, ScenarioError, type TestScenario } from '../../core/ports/test-controller.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import { REFERENCE_CREATIVE_AGENT } from '../../lib/adcp/reference-formats.ts';
import { announceCatalogChange, catalogProduct, PRODUCT_COLUMNS, toProduct, upsertProduct, type CatalogProduct, type ProductRow } from './catalog.ts';

const id = v.pipe(v.string('is required'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'));
const fixture = v.optional(v.record(v.string(), v.unknown(), 'must be an object'), {});

/** Option a seeded product carries until the storyboard seeds its own (a product needs one). */
const PLACEHOLDER_OPTION = 'sandbox_placeholder';

/**
 * The product a fixture seeds over: none, or one this caller seeded before. The seller's own catalog
 * and another caller's fixtures are not a caller's to rewrite (INVALID_PARAMS).
 */
async function current(tx: Queryable, productId: string, owner: string): Promise<CatalogProduct | undefined> {
  const [row] = await tx.query<ProductRow & { seeded_by: string | null }>(
    sql`SELECT ${PRODUCT_COLUMNS}, seeded_by FROM inventory_products WHERE product_id = ${productId}::text FOR UPDATE`,
  );
  if (row && row.seeded_by !== owner) {
    throw new ScenarioError(
      'INVALID_PARAMS',
      row.seeded_by === null
        ? `Product ${productId} is in the seller's catalog: seed fixtures under ids of their own`
        : `Product ${productId} is another caller's fixture`,
    );
  }
  // Stored products passed this same validation when written.
  return row ? (toProduct(row) as CatalogProduct) : undefined;
}

async function nextPosition(tx: Queryable): Promise<number> {
  const [row] = await tx.query<{ n: number }>(sql`SELECT COALESCE(max(position), 0)::int + 1 AS n FROM inventory_products`);
  return row!.n;
}

/** The fixture over what exists (or over defaults), validated as a catalog product. */
function merged(
  productId: string,
  base: CatalogProduct | undefined,
  fx: Record<string, unknown>,
  publishers: readonly string[],
  formatAgent: string,
): CatalogProduct {
  const words = productId.replace(/[_.:-]+/g, ' ').trim();
  const formats = Array.isArray(fx.format_ids)
    ? fx.format_ids.map((f) => (f && typeof f === 'object' && !('agent_url' in f) ? { agent_url: formatAgent, ...f } : f))
    : undefined;
  // Storyboard fixtures say `video`, which neither schema version's channel enum has: online video is `olv`.
  const channels = Array.isArray(fx.channels) ? fx.channels.map((c) => (c === 'video' ? 'olv' : c)) : undefined;
  const draft: Record<string, unknown> = {
    product_id: productId,
    name: words,
    description: `Sandbox fixture ${words}`,
    publisher_properties: publishers.map((publisher_domain) => ({ publisher_domain, selection_type: 'all' })),
    channels: ['display'],
    delivery_type: 'guaranteed',
    pricing_options: [{ pricing_option_id: PLACEHOLDER_OPTION, pricing_model: 'cpm', currency: 'USD', fixed_price: 10 }],
    daily_avails: 1_000_000,
    ...base,
    ...fx,
    ...(formats ? { format_ids: formats } : {}),
    ...(channels ? { channels } : {}),
  };
  // Fixtures name channels and ids; they also make the product findable by a brief.
  draft.tags = [...new Set([...((draft.tags as string[] | undefined) ?? []), ...words.split(' ').filter((w) => w.length > 1)])].slice(0, 32);
  try {
    return parseOrThrow(catalogProduct, draft, 'params.fixture');
  } catch (error) {
    if (error instanceof ProtocolError) throw new ScenarioError('INVALID_PARAMS', error.message);
    throw error;
  }
}

/**
 * Catalog fixtures of the official storyboards (`seed_product`, `seed_pricing_option`): upserts
 * into the sandbox deployment's catalog, announced like any catalog write so every instance's copy
 * reloads. Seeding is idempotent: the same fixture twice leaves one product. A caller seeds only
 * ids that are new or its own fixtures; a fixture is shown and sold only to the caller who seeded it
 * (the seller's own products, to everyone), so storyboards run side by side do not see each other's.
 */
export function inventoryScenarios(db: DatabasePort, publishers: readonly string[], creativeAgent?: string): TestScenario[] {
  // Fixture format ids that name no agent are the platform's own: this deployment's creative agent
  // (whose list_creative_formats then resolves them), else the reference creative agent.
  const formatAgent = creativeAgent ?? REFERENCE_CREATIVE_AGENT;
  const write = (productId: string, owner: string, change: (base: CatalogProduct | undefined) => CatalogProduct) =>
    db.transaction(async (tx) => {
      const base = await current(tx, productId, owner);
      const product = change(base);
      // A new product goes last; an existing one keeps its place in catalog order.
      await upsertProduct(tx, product, base ? 0 : await nextPosition(tx));
      await tx.query(sql`UPDATE inventory_products SET seeded_by = ${owner}::text WHERE product_id = ${productId}::text`);
      await announceCatalogChange(tx);
      return base;
    });
  return [
    defineScenario({
      name: 'seed_product',
      protocol: 'media_buy',
      // Creative paths seed the deployment's products too: creative storyboards require seller scenarios.
      servedWith: ['creative'],
      description: 'Add or update a sandbox catalog product (params.product_id, params.fixture: product fields)',
      params: v.object({ product_id: id, fixture }),
      async run({ params, principal }) {
        const base = await write(params.product_id, principal.orgId, (b) => merged(params.product_id, b, params.fixture, publishers, formatAgent));
        return { kind: 'seed', message: `Product ${params.product_id} ${base ? 'updated' : 'seeded'}` };
      },
    }),
    defineScenario({
      name: 'seed_pricing_option',
      protocol: 'media_buy',
      // Creative paths seed the deployment's products too: creative storyboards require seller scenarios.
      servedWith: ['creative'],
      description: 'Add or replace a pricing option of a sandbox product (params.product_id, params.pricing_option_id, params.fixture)',
      params: v.object({ product_id: id, pricing_option_id: id, fixture }),
      async run({ params, principal }) {
        await write(params.product_id, principal.orgId, (base) => {
          const product = base ?? merged(params.product_id, undefined, {}, publishers, formatAgent);
          const option = { currency: 'USD', pricing_model: 'cpm', ...params.fixture, pricing_option_id: params.pricing_option_id };
          const others = product.pricing_options.filter((o) => o.pricing_option_id !== params.pricing_option_id && o.pricing_option_id !== PLACEHOLDER_OPTION);
          return merged(params.product_id, product, { pricing_options: [...others, option] }, publishers, formatAgent);
        });
        return { kind: 'seed', message: `Pricing option ${params.pricing_option_id} on ${params.product_id}` };
      },
    }),
  ];
}
