import { describe, test } from 'bun:test';
import { Meilisearch } from 'meilisearch';
import { Search } from '../../core/ports/search.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import searchMeilisearch from '../../plugins/search-meilisearch/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { searchContract } from './search.contract.ts';

// search-postgres on each database adapter.
forEachAdapter('search contract: search-postgres', (adapter) =>
  searchContract(`search-postgres [${adapter}]`, async () => {
    const d = await deploy(adapter, [searchPostgres()]);
    return { port: d.deployment.get(Search), close: () => d.close() };
  }),
);

// search-meilisearch needs a server.
const MEILI = process.env.MEILISEARCH_URL;
if (!MEILI) {
  describe('search contract: search-meilisearch', () => {
    test.skip('skipped: MEILISEARCH_URL is not set (point it at a Meilisearch server to run this suite)', () => {});
  });
} else {
  searchContract('search-meilisearch', async () => {
    const index = `contract_${process.pid}_${Date.now()}`;
    const apiKey = process.env.MEILISEARCH_KEY;
    const d = await deploy(null, [searchMeilisearch({ url: MEILI, apiKey, index })]);
    return {
      port: d.deployment.get(Search),
      async close() {
        await d.close();
        await new Meilisearch({ host: MEILI, apiKey }).deleteIndex(index).waitTask();
      },
    };
  });
}
