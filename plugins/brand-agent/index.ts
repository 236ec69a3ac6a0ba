import * as v from 'valibot';
import { definePlugin, optional } from '../../core/plugin.ts';
import { ConfigError } from '../../core/config-error.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { BrandProfiles } from '../../core/ports/brand-profiles.ts';
import { Tasks } from '../../core/task.ts';
import { domainSchema } from '../../lib/domain.ts';
import { createRegistryBrandProfiles } from './registry-client.ts';
import { getBrandIdentityTask, type RepresentedBrand } from './get-brand-identity.ts';

const options = v.object({
  /** The brands this agent represents: a domain (the registry key), optionally with its brand.json brand id. */
  brands: v.optional(
    v.array(v.union([domainSchema(), v.object({ domain: domainSchema(), brand_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))) })])),
    [],
  ),
  /** A brand registry to read (`GET {url}/api/brands/resolve`) when none is in this deployment. */
  registryUrl: v.optional(v.pipe(v.string(), v.url('must be an absolute URL'))),
  /** http:// registry URLs (loopback tests with the crawler's allowlist); never in production. */
  allowHttpRegistry: v.optional(v.boolean(), false),
});

/**
 * Brand agent: `get_brand_identity` for the brands it represents, from the registry's brand data
 * through the BrandProfiles port: the registry of the same deployment (registry-brands), or a
 * registry at a configured URL through the SSRF-guarded crawler.
 */
export default definePlugin({
  name: 'brand-agent',
  deps: { tasks: Tasks, profiles: optional(BrandProfiles), crawler: optional(Crawler) },
  options,
  env: { BRAND_AGENT_BRANDS: { path: 'brands', type: 'csv' }, BRAND_REGISTRY_URL: 'registryUrl' },
  init({ tasks, profiles, crawler }, kernel) {
    const o = kernel.options;
    let source = profiles;
    if (o.registryUrl) {
      if (!crawler) throw new ConfigError('plugins.brand-agent.registryUrl: needs a crawler in the deployment (crawler-http) for outbound requests');
      // A configured registry URL wins over a registry plugin in the same deployment.
      source = createRegistryBrandProfiles(crawler, o.registryUrl, { allowHttp: o.allowHttpRegistry });
    }
    if (!source)
      throw new ConfigError('plugins.brand-agent: needs the brand registry in this deployment (registry-brands) or registryUrl (BRAND_REGISTRY_URL)');
    const brands: RepresentedBrand[] = o.brands.map((b) => (typeof b === 'string' ? { domain: b } : b));
    tasks.add(getBrandIdentityTask(brands, source, kernel.logger));
    tasks.declareCapability({ protocol: 'brand', block: { brand: { rights: false } } });
  },
});
