import { definePreset } from '../core/config.ts';
import { storage } from './storage.ts';
import { search } from './search.ts';
import restHost from '../hosts/rest/index.ts';
import auth from '../plugins/auth/index.ts';
import registryBrands from '../plugins/registry-brands/index.ts';
import registryProperties from '../plugins/registry-properties/index.ts';
import registryAgents from '../plugins/registry-agents/index.ts';
import crawlerHttp from '../plugins/crawler-http/index.ts';
import rateLimit from '../plugins/rate-limit/index.ts';
import registryFeed from '../plugins/registry-feed/index.ts';
import registryCrawl from '../plugins/registry-crawl/index.ts';
import registryProbes from '../plugins/registry-probes/index.ts';
import registryOwnership from '../plugins/registry-ownership/index.ts';
import oauth from '../plugins/oauth/index.ts';
import mcpEndpoints from '../hosts/mcp-endpoints/index.ts';
import web from '../hosts/web/index.ts';

/** Self-hosted registry: embedded PGlite by default, Postgres when DATABASE_URL is set. */
export default definePreset({
  name: 'registry',
  plugins: [
    storage,
    auth(),
    // OAuth 2.1 user sign-in (built-in authorization server, or OAUTH_ISSUER); tokens work on /api and /mcp.
    oauth(),
    search,
    registryBrands(),
    registryProperties(),
    registryAgents(),
    crawlerHttp(),
    rateLimit(),
    registryFeed(),
    registryCrawl(),
    registryProbes(),
    // Proof of domain control before community saves (OWNERSHIP_PROOF=off for a local trial).
    registryOwnership(),
    restHost({ title: 'Registry API' }),
    // The same endpoint definitions as MCP tools at /mcp.
    mcpEndpoints(),
    // The web page at / (search, browse, history, live feed, API reference).
    web(),
  ],
});
