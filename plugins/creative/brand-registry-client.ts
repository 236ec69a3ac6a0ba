import type { BrandLookupPort } from '../../core/ports/brand-lookup.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import { identityFromManifest } from '../../lib/brand-identity.ts';

/**
 * BrandLookup over a brand registry at a configured URL: `GET {registry}/api/brands/resolve?domain=`
 * through the Crawler port (SSRF guard, 10 s, 256 KB). 404 is "unknown brand" (null); any other
 * failure throws, so an asynchronous build retries the step with backoff.
 */
export function createRegistryBrandLookup(crawler: CrawlerPort, registryUrl: string, options: { allowHttp?: boolean } = {}): BrandLookupPort {
  const base = registryUrl.replace(/\/+$/, '');
  return {
    latency: 'slow',
    async resolve(domain) {
      const url = `${base}/api/brands/resolve?domain=${encodeURIComponent(domain)}`;
      const response = await crawler.fetch(url, {
        timeoutMs: 10_000,
        maxBytes: 256 * 1024,
        maxRedirects: 0,
        requireHttps: !options.allowHttp,
        accept: ['application/json'],
        headers: { accept: 'application/json' },
      });
      if (response.status === 404) return null;
      if (response.status !== 200) throw new Error(`brand registry answered ${response.status} for ${domain}`);
      const body = JSON.parse(response.text()) as Record<string, unknown>;
      if (typeof body.brand_name !== 'string' || !body.brand_name) throw new Error(`brand registry answer for ${domain} has no brand_name`);
      const canonical = typeof body.canonical_domain === 'string' ? body.canonical_domain : domain;
      return identityFromManifest(canonical, body.brand_name.slice(0, 200), body.brand_manifest);
    },
  };
}
