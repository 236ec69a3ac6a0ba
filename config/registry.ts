import { ConfigError, definePreset } from '../core/config.ts';
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

/**
 * registry-ownership from the environment: OWNERSHIP_PROOF=required|off (default required) and
 * PROTECTED_DOMAINS (comma-separated). Validated as plugin options; errors name the option path
 * and the variable it came from.
 */
export function ownershipFromEnv(env: Record<string, string | undefined> = process.env) {
  const mode = env.OWNERSHIP_PROOF || 'required';
  const protectedDomains = (env.PROTECTED_DOMAINS ?? '').split(',').map((d) => d.trim()).filter(Boolean);
  try {
    return registryOwnership({ mode: mode as 'required' | 'off', protectedDomains });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const from = error.message.includes('.mode') ? `OWNERSHIP_PROOF=${JSON.stringify(mode)}` : 'PROTECTED_DOMAINS';
    throw new ConfigError(`${error.message} (from ${from})`);
  }
}

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
    () => ownershipFromEnv(),
    restHost({ title: 'Registry API' }),
  ],
});
