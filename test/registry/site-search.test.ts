import { expect, test } from 'bun:test';
import auth from '../../plugins/auth/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

forEachDatabase(
  'site search over every registry source',
  (adapter, schema) =>
    startServer(adapter, schema, [auth(), searchPostgres(), rateLimit(), registryBrands(), registryProperties(), registryAgents(), restHost()]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();

    test('/api/search finds community brands and hosted properties', async () => {
      const { key } = await newKey(s().deployment);
      await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'zephyr-foods.example', brand_name: 'Zephyr Foods' } });
      await s().fetch('/api/properties/save', {
        method: 'POST',
        token: key,
        json: {
          publisher_domain: 'zephyr-news.example',
          authorized_agents: [],
          properties: [{ type: 'podcast', name: 'Zephyr Daily', identifiers: [{ type: 'rss_url', value: 'https://zephyr-news.example/feed' }] }],
        },
      });
      const res = await s().fetch('/api/search?q=ZEPHYR');
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body.brands).toEqual([{ domain: 'zephyr-foods.example', name: 'Zephyr Foods', source: 'community' }]);
      expect(body.properties).toEqual([
        {
          publisher_domain: 'zephyr-news.example',
          id: 'podcast_zephyr_daily',
          name: 'Zephyr Daily',
          type: 'podcast',
          identifiers: [{ type: 'rss_url', value: 'https://zephyr-news.example/feed' }],
          source: 'hosted',
        },
      ]);
      expect(((await (await s().fetch('/api/search?q=zz%25')).json()) as any).brands).toEqual([]);
    });
  },
);
