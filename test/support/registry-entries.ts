import { expect } from 'bun:test';
import type { AdapterName } from './db.ts';
import { deploy, type Deployed } from './deploy.ts';
import { newKey } from './principals.ts';
import auth from '../../plugins/auth/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import restHost from '../../hosts/rest/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

/** What the resolution endpoint serves for a domain, reduced to what every registry has. */
export interface Resolved {
  name: string;
  authoritative: boolean;
}

/** One revisioned registry (brands or hosted properties) as a client sees it over REST. */
export interface RegistryClient {
  /** Community (or hosted) save of an entry named `name`; answers the HTTP status. */
  save(domain: string, name: string): Promise<number>;
  /** Bulk resolution (uncached): null when unknown. */
  resolve(domain: string): Promise<Resolved | null>;
  /** The authoritative file of the domain naming its entry `name`. */
  document(domain: string, name: string): Record<string, unknown>;
}

/**
 * registry-brands and registry-properties served on loopback (with auth for saves; no ownership
 * plugin, so saves need no proof), and a REST client for each.
 */
export async function registryEntries(adapter: AdapterName): Promise<{ deployed: Deployed; brands: RegistryClient; properties: RegistryClient }> {
  const deployed = await deploy(adapter, [auth(), rateLimit(), registryBrands(), registryProperties(), restHost()], { serve: true });
  const { key } = await newKey(deployed.deployment);
  const post = (path: string, json: unknown) =>
    fetch(`${deployed.base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
  const bulk = async (base: string, domain: string) => {
    const res = await post(`${base}/resolve/bulk`, { domains: [domain] });
    expect(res.status).toBe(200);
    return ((await res.json()) as { results: Record<string, any> }).results[domain] ?? null;
  };
  return {
    deployed,
    brands: {
      save: async (domain, name) => (await post('/api/brands/save', { domain, brand_name: name })).status,
      async resolve(domain) {
        const r = await bulk('/api/brands', domain);
        return r && { name: r.brand_name, authoritative: r.source === 'brand_json' };
      },
      document: (domain, name) => ({ brands: [{ id: 'main', names: [{ en: name }], domains: [domain] }] }),
    },
    properties: {
      save: async (domain, name) =>
        (
          await post('/api/properties/save', {
            publisher_domain: domain,
            authorized_agents: [],
            properties: [{ type: 'website', name, identifiers: [{ type: 'domain', value: domain }] }],
          })
        ).status,
      async resolve(domain) {
        const r = await bulk('/api/properties', domain);
        return r && { name: r.properties[0]?.name, authoritative: r.verified === true };
      },
      document: (domain, name) => ({
        authorized_agents: [{ url: 'https://agent.example/mcp', authorized_for: 'all' }],
        properties: [{ property_type: 'website', name, identifiers: [{ type: 'domain', value: domain }] }],
      }),
    },
  };
}
