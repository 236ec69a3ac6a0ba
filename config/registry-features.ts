import type { PluginEntry } from '../core/config.ts';
import { search } from './search.ts';
import oauth from '../plugins/oauth/index.ts';
import registryBrands from '../plugins/registry-brands/index.ts';
import registryProperties from '../plugins/registry-properties/index.ts';
import registryPolicies from '../plugins/registry-policies/index.ts';
import registryAgents from '../plugins/registry-agents/index.ts';
import crawlerHttp from '../plugins/crawler-http/index.ts';
import rateLimit from '../plugins/rate-limit/index.ts';
import registryFeed from '../plugins/registry-feed/index.ts';
import registryCrawl from '../plugins/registry-crawl/index.ts';
import registryProbes from '../plugins/registry-probes/index.ts';
import registryOwnership from '../plugins/registry-ownership/index.ts';

/** The registry's features (every preset serving the registry adds storage, auth and its hosts). */
export function registryFeatures(): PluginEntry[] {
  return [
    // OAuth 2.1 user sign-in (built-in authorization server, or OAUTH_ISSUER); tokens work on /api and /mcp.
    oauth(),
    search,
    registryBrands(),
    registryProperties(),
    registryPolicies(),
    registryAgents(),
    crawlerHttp(),
    rateLimit(),
    registryFeed(),
    registryCrawl(),
    registryProbes(),
    // Proof of domain control before community saves (OWNERSHIP_PROOF=off for a local trial).
    registryOwnership(),
  ];
}
