import type { AppConfig } from '../core/config.ts';
import { ConfigError } from '../core/config.ts';
import searchPostgres from '../plugins/search-postgres/index.ts';
import searchMeilisearch from '../plugins/search-meilisearch/index.ts';

/** The search adapter config.search.adapter names (SEARCH=postgres|meilisearch). */
export function searchFor(config: AppConfig) {
  const adapters = {
    postgres: () => searchPostgres(),
    meilisearch: () => {
      if (!config.search.meilisearchUrl) throw new ConfigError('search.meilisearchUrl: is required when search.adapter is meilisearch (set MEILISEARCH_URL)');
      return searchMeilisearch({ url: config.search.meilisearchUrl, apiKey: config.search.meilisearchKey });
    },
  } as const;
  const make = adapters[config.search.adapter];
  if (!make) throw new ConfigError(`search.adapter: unknown adapter ${JSON.stringify(config.search.adapter)} (postgres | meilisearch)`);
  return make();
}
