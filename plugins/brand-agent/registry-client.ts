import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { BrandProfilesPort } from '../../core/ports/brand-profiles.ts';
import { brandProfile } from '../../lib/brand-profile.ts';

const LIMITS = { timeoutMs: 10_000, maxBytes: 256 * 1024, maxRedirects: 0, accept: ['application/json'], headers: { accept: 'application/json' } } as const;

/**
 * BrandProfiles over a brand registry at a URL, through the Crawler port (SSRF guard, 10 s,
 * 256 KB): `GET /api/brands/resolve?domain=`, and for brand.json entries the stored document
 * (`GET /api/brands/brand-json?domain=`). 404 is "unknown brand"; any other failure throws.
 */
export function createRegistryBrandProfiles(crawler: CrawlerPort, registryUrl: string, options: { allowHttp?: boolean } = {}): BrandProfilesPort {
  const base = registryUrl.replace(/\/+$/, '');
  const get = async (path: string, domain: string) => {
    const response = await crawler.fetch(`${base}${path}?domain=${encodeURIComponent(domain)}`, { ...LIMITS, requireHttps: !options.allowHttp });
    if (response.status === 404) return null;
    if (response.status !== 200) throw new Error(`brand registry answered ${response.status} for ${domain}`);
    const body = JSON.parse(response.text());
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error(`brand registry answer for ${domain} is not an object`);
    return body as Record<string, any>;
  };
  return {
    async get(domain) {
      const entry = await get('/api/brands/resolve', domain);
      if (!entry) return null;
      if (typeof entry.brand_name !== 'string' || !entry.brand_name) throw new Error(`brand registry answer for ${domain} has no brand_name`);
      const canonical = typeof entry.canonical_domain === 'string' ? entry.canonical_domain : domain;
      const source = typeof entry.source === 'string' ? entry.source : 'community';
      // Authoritative sources (crawled or registry-hosted brand.json) have a stored document.
      const document = source === 'brand_json' || source === 'hosted' ? ((await get('/api/brands/brand-json', canonical))?.data ?? null) : null;
      return brandProfile(canonical, source, entry as { brand_name: string }, document);
    },
  };
}
