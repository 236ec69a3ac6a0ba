import sales, { type SalesPluginOptions } from '../plugins/sales/index.ts';
import salesAccounts, { type SalesAccountsOptions } from '../plugins/sales-accounts/index.ts';
import type { PluginInstance } from '../core/plugin.ts';

/** The options of every sales plugin, in one object (each plugin takes its own; `sandbox` goes to all). */
export type SalesOptions = SalesPluginOptions & SalesAccountsOptions;

/**
 * The sales agent's plugins, in dependency order: buyer accounts, then media buys (products, buys,
 * their lifecycle and reporting, the seller's creatives).
 */
export function salesPlugins(options: SalesOptions = {}): PluginInstance[] {
  const { sandboxAccounts, ...mediaBuys } = options;
  return [salesAccounts({ sandbox: options.sandbox, sandboxAccounts }), sales(mediaBuys)];
}
