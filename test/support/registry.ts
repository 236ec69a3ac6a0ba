import type { PluginEntry } from '../../core/config.ts';
import restHost from '../../hosts/rest/index.ts';
import auth from '../../plugins/auth/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import registryCrawl from '../../plugins/registry-crawl/index.ts';
import registryProbes from '../../plugins/registry-probes/index.ts';
import registryOwnership from '../../plugins/registry-ownership/index.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import { CrawlerError } from '../../core/ports/crawler.ts';

/** Test tokens of the registry fixture, one per standing. */
export const REGISTRY_TOKENS = {
  member: 'registry-member-token-0001',
  other: 'registry-other-token-00002',
  admin: 'registry-admin-token-00003',
  public: 'registry-public-token-0004',
} as const;

/** A crawler that refuses every request at once: hermetic tests never reach the network. */
export const offlineCrawler: CrawlerPort = {
  async fetch(url) {
    throw new CrawlerError('ssrf_blocked', `offline test crawler: ${url.slice(0, 80)}`);
  },
  async resolveTxt() {
    return [];
  },
  async assertPublicHost(host) {
    throw new CrawlerError('ssrf_blocked', `offline test crawler: ${host.slice(0, 80)}`);
  },
};

/**
 * Every plugin of the registry preset (config/registry.ts) with test settings: fixed tokens per
 * standing, ownership proof off. Pair with `overrides: [[Crawler, offlineCrawler]]`.
 */
export function registryPlugins(): PluginEntry[] {
  return [
    auth({
      testTokens: [
        { token: REGISTRY_TOKENS.member, name: 'Member Org', tier: 'member' },
        { token: REGISTRY_TOKENS.other, name: 'Other Org', tier: 'member' },
        { token: REGISTRY_TOKENS.admin, name: 'Admin Org', tier: 'admin' },
        { token: REGISTRY_TOKENS.public, name: 'Public Org', tier: 'public' },
      ],
    }),
    searchPostgres(),
    registryBrands(),
    registryProperties(),
    registryAgents(),
    rateLimit(),
    registryFeed(),
    registryCrawl(),
    registryProbes(),
    registryOwnership({ mode: 'off' }),
    restHost({ title: 'Registry API' }),
  ];
}
