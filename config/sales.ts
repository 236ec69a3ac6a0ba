import sales, { type SalesPluginOptions } from '../plugins/sales/index.ts';
import salesAccounts, { type SalesAccountsOptions } from '../plugins/sales-accounts/index.ts';
import salesBuyerData, { type BuyerDataPluginOptions } from '../plugins/sales-buyer-data/index.ts';
import type { PluginInstance } from '../core/plugin.ts';

/** The options of every sales plugin in one object: each plugin takes its own, `sandbox` goes to all. */
export type SalesOptions = SalesPluginOptions & SalesAccountsOptions & BuyerDataPluginOptions;

/**
 * The sales agent's plugins, in dependency order: buyer accounts, media buys (products, buys, their
 * lifecycle and reporting, the seller's creatives), buyer data (audiences, conversions, catalogs).
 */
export function salesPlugins(options: SalesOptions = {}): PluginInstance[] {
  const { sandboxAccounts, minAudienceSize, audienceMatchRate, catalogSyncItems, maxCatalogItems, maxFeedBytes, allowHttpFeeds, ...mediaBuys } = options;
  const { sandbox } = options;
  return [
    salesAccounts({ sandbox, sandboxAccounts }),
    sales(mediaBuys),
    salesBuyerData({ sandbox, minAudienceSize, audienceMatchRate, catalogSyncItems, maxCatalogItems, maxFeedBytes, allowHttpFeeds }),
  ];
}
