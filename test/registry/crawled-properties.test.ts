import { expect, test } from 'bun:test';
import { Discovery } from '../../core/ports/discovery.ts';
import auth from '../../plugins/auth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';

/** A publisher's adagents.json: three properties, five authorized agents. */
const adagents = (domain: string) => ({
  contact: { name: `${domain} ad ops` },
  properties: [
    { property_id: 'site', property_type: 'website', name: 'Site', identifiers: [{ type: 'domain', value: domain }] },
    { property_id: 'app', property_type: 'mobile_app', name: 'App', identifiers: [{ type: 'ios_bundle', value: `com.${domain.split('.')[0]}.app` }] },
    { property_id: 'radio', property_type: 'radio', name: 'Radio', identifiers: [{ type: 'domain', value: `radio.${domain}` }] },
  ],
  authorized_agents: [1, 2, 3, 4, 5].map((n) => ({ url: `https://agent${n}.crawled.example/mcp`, authorized_for: 'All inventory' })),
});

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await Bun.sleep(50);
  }
}

forEachDatabase(
  'properties of publishers the projection knows',
  (adapter, schema) =>
    startServer(adapter, schema, [
      auth(),
      rateLimit({ pruneIntervalMs: 0 }),
      searchPostgres(),
      registryProperties(),
      registryAgents({ healthIntervalMs: 0, recordIntervalMs: 1000 }),
      restHost(),
    ]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();

    test('a publisher projected without the crawl pipeline resolves, in bulk, and is listed with domain and stats', async () => {
      const domains = ['crawled-one.example', 'crawled-two.example'] as const;
      // As the demo seed, an import or a crawl made before registry-properties was deployed: the projection only.
      for (const d of domains) await s().deployment.get(Discovery).projectAdagents(d, adagents(d), { valid: true, now: new Date() });
      const lookup = await (await s().fetch(`/api/registry/lookup/domain/${domains[0]}`)).json();
      expect(lookup.authorized_agents).toHaveLength(5);

      const resolved = await eventually(
        () => s().fetch(`/api/properties/resolve?domain=${domains[0]}`),
        (r) => r.status === 200,
      );
      expect(resolved.status).toBe(200);
      const body = await resolved.json();
      expect(body).toMatchObject({ publisher_domain: domains[0], source: 'adagents_json', verified: true });
      expect(body.properties.map((p: { id: string }) => p.id)).toEqual(['site', 'app', 'radio']);
      expect(body.authorized_agents).toHaveLength(5);

      // What the official client's lookupProperties / domainsExist read: `results`, null for unknown domains.
      const bulk = await eventually(
        async () => (await s().fetch('/api/properties/resolve/bulk', { method: 'POST', json: { domains: [...domains, 'unknown.example'] } })).json(),
        (b) => b.results[domains[1]] != null,
      );
      expect(bulk.results[domains[0]].properties).toHaveLength(3);
      expect(bulk.results[domains[1]].properties).toHaveLength(3);
      expect(bulk.results['unknown.example']).toBeNull();

      // PropertyRegistryItem: `domain`, with `stats` beside the list.
      const list = await (await s().fetch('/api/properties/registry?search=crawled-')).json();
      expect(list.properties.map((p: { domain: string }) => p.domain)).toEqual(domains);
      expect(list.properties[0]).toMatchObject({ domain: domains[0], source: 'adagents_json', property_count: 3, agent_count: 5, verified: true });
      expect(list.stats).toEqual({ publishers: 2, properties: 6, verified: 2, by_source: { adagents_json: 2 } });
    });
  },
);
