import { chooseAdapter } from '../core/config.ts';
import searchPostgres from '../plugins/search-postgres/index.ts';
import searchMeilisearch from '../plugins/search-meilisearch/index.ts';

/** The agent search adapter: `SEARCH=postgres|meilisearch` (default postgres; Meilisearch reads MEILISEARCH_URL/KEY). */
export const search = chooseAdapter({
  variable: 'SEARCH',
  fallback: () => 'postgres',
  adapters: { postgres: () => searchPostgres(), meilisearch: () => searchMeilisearch() },
});
