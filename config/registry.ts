import { definePreset } from '../core/config.ts';
import { storageFor } from './storage.ts';
import { searchFor } from './search.ts';
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

/** Self-hosted registry: embedded PGlite by default, Postgres when DATABASE_URL is set. */
export default definePreset({
  name: 'registry',
  plugins: [
    storageFor,
    auth(),
    searchFor,
    registryBrands(),
    registryProperties(),
    registryAgents(),
    crawlerHttp(),
    rateLimit(),
    registryFeed(),
    registryCrawl(),
    registryProbes(),
    // Proof of domain control before community saves (OWNERSHIP_PROOF=off for a local trial).
    registryOwnership({ mode: (process.env.OWNERSHIP_PROOF || 'required') as 'required' | 'off' }),
    restHost({ title: 'Registry API' }),
  ],
});
