import { token } from '../token.ts';

/** A creative format as a creative agent names it (`agent_url` is the authoritative agent). */
export interface FormatRef {
  agent_url: string;
  id: string;
}

export type DeliveryType = 'guaranteed' | 'non_guaranteed';
export type PricingModel = 'cpm' | 'vcpm' | 'cpc' | 'cpcv' | 'cpv' | 'flat_rate';
export type ReportingFrequency = 'hourly' | 'daily' | 'monthly';

/** One way to buy a product: a fixed price, or a floor the buyer bids above. */
export interface PricingOption {
  pricing_option_id: string;
  pricing_model: PricingModel;
  /** ISO 4217. */
  currency: string;
  fixed_price?: number;
  floor_price?: number;
  /** Smallest package budget accepted with this option. */
  min_spend_per_package?: number;
}

/** Publisher inventory a product covers (adagents.json selection patterns). */
export type PropertySelector =
  | { publisher_domain: string; selection_type: 'all' }
  | { publisher_domain: string; selection_type: 'by_id'; property_ids: string[] }
  | { publisher_domain: string; selection_type: 'by_tag'; property_tags: string[] };

/** A sellable product of the catalog. */
export interface Product {
  product_id: string;
  name: string;
  description: string;
  publisher_properties: PropertySelector[];
  channels: string[];
  delivery_type: DeliveryType;
  format_ids: FormatRef[];
  pricing_options: PricingOption[];
  /** Free keywords used for ranking and `more_like_this`. */
  tags: string[];
  /** ISO 3166-1 alpha-2; empty = everywhere. */
  countries: string[];
  /** Impressions per day the product can deliver (availability and forecasts). */
  daily_avails: number;
  /** Expected click-through rate, 0..1 (forecasts). */
  ctr: number;
}

/** A product with why it was returned. */
export interface RankedProduct extends Product {
  /** Human-readable reason it matched the brief (absent without a brief). */
  brief_relevance?: string;
}

export interface ProductQuery {
  /** Natural-language brief: ranks products by relevance (no brief: catalog order). */
  brief?: string;
  /** Rank by similarity to these products (refine `more_like_this`); they are themselves excluded. */
  similarTo?: string[];
  /** Only these products (refine `include`); order kept by relevance. */
  onlyIds?: string[];
  /** Never these products (refine `omit`). */
  excludeIds?: string[];
  channels?: string[];
  deliveryTypes?: DeliveryType[];
  countries?: string[];
  /** Products accepting at least one of these formats. */
  formatIds?: FormatRef[];
  currencies?: string[];
  /** true: only products with a fixed-price option; false: only auction ones. */
  fixedPrice?: boolean;
  limit: number;
  /** Opaque cursor from a previous page of the same query. */
  cursor?: string;
  /** Only products selling inventory of one of these publishers (lowercase domains; a property list's). */
  publisherDomains?: string[];
  /** The caller's organization: sandbox fixtures another caller seeded are not shown (undefined: an internal read, all are). */
  viewer?: string;
}

export interface ProductPage {
  products: RankedProduct[];
  /** Present when more products follow. */
  cursor?: string;
  /**
   * How many products match the query in all (AdCP's optional `total_count`); an adapter may leave
   * it out when counting costs too much (inventory-db: past 1000 matches), then on every page of the query.
   */
  total?: number;
}

export interface ForecastRequest {
  budget?: number;
  start?: Date;
  end?: Date;
  pricingOptionId?: string;
}

/** Expected delivery of a product for a budget and flight: low / mid / high bounds. */
export interface Forecast {
  currency: string;
  budget: number;
  impressions: { low: number; mid: number; high: number };
  clicks: { low: number; mid: number; high: number };
  /** Impressions the flight could deliver at most (availability). */
  available_impressions: number;
}

/**
 * The seller's product catalog. `search` ranks and filters (cursor pagination over one stable
 * order; a cursor of another query is INVALID_REQUEST); `get` returns the products that exist
 * among `ids` (a sandbox fixture only to the caller who seeded it, as `viewer`); `forecast`
 * estimates delivery from the product's availability and pricing.
 * Adapters: inventory-db (a database catalog imported from JSON); a seller may bind its own.
 */
export interface InventoryPort {
  search(query: ProductQuery): Promise<ProductPage>;
  get(ids: readonly string[], viewer?: string): Promise<Map<string, Product>>;
  forecast(product: Product, request: ForecastRequest): Forecast;
}

export const Inventory = token<InventoryPort>('sales.inventory');
