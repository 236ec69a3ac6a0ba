import sales, { type SalesPluginOptions } from '../plugins/sales/index.ts';
import salesAccounts, { type SalesAccountsOptions } from '../plugins/sales-accounts/index.ts';
import salesBuyerData, { type BuyerDataPluginOptions } from '../plugins/sales-buyer-data/index.ts';
import salesCreatives, { type SellerCreativesOptions } from '../plugins/sales-creatives/index.ts';
import type { PluginInstance } from '../core/plugin.ts';

/** The options of every sales plugin in one object: each plugin takes its own, `sandbox` goes to all. */
export type SalesOptions = SalesPluginOptions & SalesAccountsOptions & SellerCreativesOptions & BuyerDataPluginOptions;

/**
 * The sales agent's plugins, in dependency order: buyer accounts, the seller's creative library, media
 * buys (products, buys, their lifecycle and reporting, creative assignments), buyer data (audiences,
 * conversions, catalogs).
 */
export function salesPlugins(options: SalesOptions = {}): PluginInstance[] {
  const {
    sandboxAccounts,
    formatCacheSeconds,
    minAudienceSize,
    audienceMatchRate,
    catalogSyncItems,
    maxCatalogItems,
    maxFeedBytes,
    allowHttpFeeds,
    ...mediaBuys
  } = options;
  const { sandbox } = options;
  return [
    salesAccounts({ sandbox, sandboxAccounts }),
    salesCreatives({ sandbox, formatCacheSeconds }),
    sales(mediaBuys),
    salesBuyerData({ sandbox, minAudienceSize, audienceMatchRate, catalogSyncItems, maxCatalogItems, maxFeedBytes, allowHttpFeeds }),
  ];
}
