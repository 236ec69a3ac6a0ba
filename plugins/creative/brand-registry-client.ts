import type { BrandLookupPort } from '../../core/ports/brand-lookup.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import { identityFromManifest, identityFromProfile } from '../../lib/brand-identity.ts';
import { brandProfile } from '../../lib/brand-profile.ts';

/**
 * BrandLookup over a brand registry at a configured URL: `GET {registry}/api/brands/resolve?domain=`
 * through the Crawler port (SSRF guard, 10 s, 256 KB). 404 is "unknown brand" (null); any other
 * failure throws, so an asynchronous build retries the step with backoff. A brand known by its brand.json
 * (`source: brand_json`, no colours in the resolution) is read from `GET {registry}/api/brands/brand-json`:
 * its colours, logos and fonts.
 */
export function createRegistryBrandLookup(crawler: CrawlerPort, registryUrl: string, options: { allowHttp?: boolean } = {}): BrandLookupPort {
  const base = registryUrl.replace(/\/+$/, '');
  const get = (path: string) =>
    crawler.fetch(`${base}${path}`, {
      timeoutMs: 10_000,
      maxBytes: 256 * 1024,
      maxRedirects: 0,
      requireHttps: !options.allowHttp,
      accept: ['application/json'],
      headers: { accept: 'application/json' },
    });
  return {
    latency: 'slow',
    async resolve(domain) {
      const response = await get(`/api/brands/resolve?domain=${encodeURIComponent(domain)}`);
      if (response.status === 404) return null;
      if (response.status !== 200) throw new Error(`brand registry answered ${response.status} for ${domain}`);
      const body = JSON.parse(response.text()) as Record<string, unknown>;
      if (typeof body.brand_name !== 'string' || !body.brand_name) throw new Error(`brand registry answer for ${domain} has no brand_name`);
      const canonical = typeof body.canonical_domain === 'string' ? body.canonical_domain : domain;
      const name = body.brand_name.slice(0, 200);
      if (body.source === 'brand_json') {
        const stored = await get(`/api/brands/brand-json?domain=${encodeURIComponent(canonical)}`);
        // 404: the registry keeps no document (the resolution is all there is).
        if (stored.status !== 404) {
          if (stored.status !== 200) throw new Error(`brand registry answered ${stored.status} for the brand.json of ${canonical}`);
          const document = (JSON.parse(stored.text()) as { data?: unknown }).data;
          return identityFromProfile(brandProfile(canonical, 'brand_json', { brand_name: name, brand_manifest: body.brand_manifest }, document));
        }
      }
      return identityFromManifest(canonical, name, body.brand_manifest);
    },
  };
}
