import { pipelined } from '../../../lib/pipelined.ts';
import { ProtocolError } from '../../../core/errors.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import type { OrderLine } from '../../../core/ports/ad-server.ts';
import type { Product } from '../../../core/ports/inventory.ts';
import type { SalesDeps } from '../deps.ts';
import { keptOverlay, type PackageRequest } from '../schemas.ts';
import { matchPackageLists } from '../list-targeting.ts';
import { fitsFormats, formatKey, structuredFormatIds } from '../../../lib/adcp/format-ids.ts';
import type { PreparedCreative } from '../../../core/ports/seller-creatives.ts';
import { assign } from './assignments.ts';
import { insertPackage, type PackageRow } from './store.ts';

type PricingOption = Product['pricing_options'][number];

/**
 * The least budget a package of `option` takes: the seller's own floor, the option's minimum spend,
 * and for a flat rate its price (`rate`: the fixed price, else the bid). get_products publishes it
 * as the option's min_spend_per_package, so a buyer sees the minimum before BUDGET_TOO_LOW says it.
 */
export function packageMinimum(option: PricingOption, sellerFloor: number, rate = option.fixed_price ?? 0): number {
  return Math.max(sellerFloor, option.min_spend_per_package ?? 0, option.pricing_model === 'flat_rate' ? rate : 0);
}

/** A validated package, ready to be written and booked. */
export interface PlannedPackage {
  row: PackageRow;
  product: Product;
  creatives: PreparedCreative[];
  assignments: Array<{ creative_id: string; weight?: number }>;
  line: OrderLine;
  /** Said to the buyer about this package (its targeting leaves no inventory). */
  note?: string;
}

/**
 * Validate packages against the catalog before anything is written: the product exists
 * (PRODUCT_NOT_FOUND), the pricing option is the product's, auction bids reach the floor, the
 * budget reaches the option's and the seller's minimum (BUDGET_TOO_LOW), requested formats are
 * the product's, inline creatives are valid, assigned ones exist; one currency per buy.
 */
export async function planPackages(
  deps: SalesDeps,
  owner: string,
  accountId: string,
  inputs: readonly PackageRequest[],
  field: string,
  mediaBuyId: string,
  firstPosition: number,
  currency: string | null,
  now: Date,
): Promise<PlannedPackage[]> {
  const products = await deps.inventory.get([...new Set(inputs.map((p) => p.product_id))], owner);
  const library = await deps.creatives.formatKeys(
    deps.db,
    accountId,
    inputs.flatMap((p) => (p.creative_assignments ?? []).map((a) => a.creative_id)),
  );
  let buyCurrency = currency;
  const planned: PlannedPackage[] = [];
  for (const [i, p] of inputs.entries()) {
    const at = `${field}[${i}]`;
    const product = products.get(p.product_id);
    if (!product) {
      throw new ProtocolError('PRODUCT_NOT_FOUND', `No product ${p.product_id.slice(0, 128)} in this catalog`, {
        status: 404,
        field: `${at}.product_id`,
        suggestion: 'Use a product_id returned by get_products',
      });
    }
    const match = await matchPackageLists(deps, owner, p.targeting_overlay, product, `${at}.targeting_overlay`);
    const option = product.pricing_options.find((o) => o.pricing_option_id === p.pricing_option_id);
    if (!option) {
      throw new ProtocolError(
        'INVALID_REQUEST',
        `${at}.pricing_option_id: ${p.pricing_option_id.slice(0, 128)} is not a pricing option of ${product.product_id}`,
        {
          field: `${at}.pricing_option_id`,
          suggestion: `Options: ${product.pricing_options.map((o) => o.pricing_option_id).join(', ')}`,
        },
      );
    }
    buyCurrency ??= option.currency;
    if (option.currency !== buyCurrency) {
      throw new ProtocolError(
        'INVALID_REQUEST',
        `${at}.pricing_option_id: the packages of one media buy share one currency (${buyCurrency}), this option is in ${option.currency}`,
        { field: `${at}.pricing_option_id` },
      );
    }
    let rate: number;
    if (option.fixed_price !== undefined) rate = option.fixed_price;
    else {
      if (p.bid_price === undefined)
        throw new ProtocolError(
          'INVALID_REQUEST',
          `${at}.bid_price: is required for the auction option ${option.pricing_option_id} (floor ${option.floor_price})`,
          { field: `${at}.bid_price` },
        );
      if (p.bid_price < option.floor_price!) {
        throw new ProtocolError('INVALID_REQUEST', `${at}.bid_price: ${p.bid_price} is below the floor price ${option.floor_price} ${option.currency}`, {
          field: `${at}.bid_price`,
        });
      }
      rate = p.bid_price;
    }
    const minimum = packageMinimum(option, deps.options.minPackageBudget, rate);
    if (p.budget < minimum) {
      throw new ProtocolError(
        'BUDGET_TOO_LOW',
        `${at}.budget: ${p.budget} ${option.currency} is below the minimum of ${minimum} ${option.currency} for ${option.pricing_option_id}`,
        {
          field: `${at}.budget`,
          suggestion: `Raise the budget to at least ${minimum}`,
          details: { minimum_budget: minimum, currency: option.currency },
        },
      );
    }
    const formats = p.format_ids ? structuredFormatIds(p.format_ids, `${at}.format_ids`) : product.format_ids;
    // Without format_ids the package takes the product's own: nothing to check.
    if (p.format_ids) {
      const productKeys = new Set(product.format_ids.map(formatKey));
      formats.forEach((f, j) => {
        if (!productKeys.has(formatKey(f))) {
          throw new ProtocolError('FORMAT_NOT_SUPPORTED', `${at}.format_ids[${j}]: ${f.id} is not a format of ${product.product_id}`, {
            field: `${at}.format_ids[${j}]`,
            suggestion: `Formats: ${product.format_ids.map((x) => x.id).join(', ')}`,
          });
        }
      });
    }
    const row: PackageRow = {
      package_id: `pkg_${deps.ids.uuid7().replace(/-/g, '')}`,
      media_buy_id: mediaBuyId,
      product_id: product.product_id,
      pricing_option_id: option.pricing_option_id,
      pricing_model: option.pricing_model,
      rate,
      currency: option.currency,
      budget: p.budget,
      bid_price: p.bid_price ?? null,
      paused: p.paused ?? false,
      canceled: false,
      format_ids: formats,
      position: firstPosition + i,
      created_at: now,
      targeting_overlay: keptOverlay(p.targeting_overlay),
      creatives: 0,
    };
    const creatives = p.creatives ? await deps.creatives.prepare(p.creatives, `${at}.creatives`) : [];
    creatives.forEach((c, j) => {
      if (!fitsFormats(row.format_ids, c.key))
        throw new ProtocolError('FORMAT_NOT_SUPPORTED', `${at}.creatives[${j}].format_id: ${c.format.id} is not a format of this package`, {
          field: `${at}.creatives[${j}].format_id`,
        });
    });
    const assignments = p.creative_assignments ?? [];
    assignments.forEach((a, j) => {
      const key = creatives.find((c) => c.input.creative_id === a.creative_id)?.key ?? library.get(a.creative_id);
      if (!key)
        throw new ProtocolError('CREATIVE_NOT_FOUND', `Creative ${a.creative_id} is not in the account library`, {
          status: 404,
          field: `${at}.creative_assignments[${j}].creative_id`,
        });
      if (!fitsFormats(row.format_ids, key))
        throw new ProtocolError('FORMAT_NOT_SUPPORTED', `Creative ${a.creative_id} does not fit the formats of this package`, {
          field: `${at}.creative_assignments[${j}].creative_id`,
        });
    });
    row.creatives = creatives.length + assignments.filter((a) => !creatives.some((c) => c.input.creative_id === a.creative_id)).length;
    const line: OrderLine = {
      packageId: row.package_id,
      productId: product.product_id,
      budget: p.budget,
      pricingModel: option.pricing_model,
      rate,
      currency: option.currency,
      ctr: product.ctr,
      inventoryShare: match.share,
    };
    planned.push({ row, product, creatives, assignments, line, ...(match.note ? { note: match.note } : {}) });
  }
  return planned;
}

const withoutCount = ({ creatives: _count, ...row }: PackageRow) => row;

/**
 * A package with inline creatives or assignments is written in several round trips, each waiting for the one
 * before (the creatives, then their assignments); the others all go in one.
 */
export const writtenInSteps = (p: PlannedPackage) => p.creatives.length > 0 || p.assignments.length > 0;

/** Write planned packages, their inline creatives and assignments (in the buy's transaction). */
export async function writePackages(
  deps: SalesDeps,
  tx: Queryable,
  owner: string,
  accountId: string,
  planned: readonly PlannedPackage[],
  now: Date,
): Promise<void> {
  // Packages without creatives (the usual buy) go in one round trip; inline creatives are written before their assignments.
  const plain = planned.filter((p) => !writtenInSteps(p));
  await pipelined(plain.map((p) => insertPackage(tx, withoutCount(p.row))));
  for (const p of planned) {
    if (plain.includes(p)) continue;
    await insertPackage(tx, withoutCount(p.row));
    if (p.creatives.length) await deps.creatives.write(tx, owner, accountId, p.creatives, now);
    for (const c of p.creatives) await assign(tx, accountId, c.input.creative_id, p.row.package_id, c.input.weight, now);
    for (const a of p.assignments) await assign(tx, accountId, a.creative_id, p.row.package_id, a.weight, now);
  }
}

/** A package without creatives for its formats holds the buy in `pending_creatives`. */
export const needsCreatives = (packages: ReadonlyArray<Pick<PackageRow, 'format_ids' | 'creatives' | 'canceled'>>) =>
  packages.some((p) => !p.canceled && p.format_ids.length > 0 && p.creatives === 0);
