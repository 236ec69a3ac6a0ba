import { describe, test } from 'bun:test';
import { Search } from '../../core/ports/search.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import searchMeilisearch, { type createMeilisearchSearch } from '../../plugins/search-meilisearch/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { searchContract } from './search.contract.ts';

// search-postgres on each database adapter.
forEachAdapter('search contract: search-postgres', (adapter) =>
  searchContract(`search-postgres [${adapter}]`, async () => {
    const d = await deploy(adapter, [searchPostgres()]);
    return { port: d.deployment.get(Search), close: () => d.close() };
  }),
);

// search-meilisearch needs a server (Meilisearch >= 1.15: the cursor compares strings in filters).
const MEILI = process.env.MEILISEARCH_URL;
if (!MEILI) {
  describe('search contract: search-meilisearch', () => {
    test.skip('skipped: MEILISEARCH_URL is not set (point it at a Meilisearch server to run this suite)', () => {});
  });
} else {
  searchContract('search-meilisearch', async () => {
    // A fresh index per run, created (with its settings) on first use and dropped afterwards.
    const index = `contract_${crypto.randomUUID().replaceAll('-', '')}`;
    const d = await deploy(null, [searchMeilisearch({ url: MEILI, apiKey: process.env.MEILISEARCH_KEY, index })]);
    const port = d.deployment.get(Search) as ReturnType<typeof createMeilisearchSearch>;
    return {
      port,
      async close() {
        await port.dropIndex();
        await d.close();
      },
    };
  });
}
