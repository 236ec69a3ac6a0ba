import * as v from 'valibot';
import { CrawlerError, type CrawlerPort } from '../../../core/ports/crawler.ts';
import { ProtocolError } from '../../../core/errors.ts';
import { brandManifest } from '../schemas.ts';
import { cleanText, iconSize, normalizeColor, parsePage } from './html.ts';

export const PAGE_MAX_BYTES = 1024 * 1024;
const MANIFEST_MAX_BYTES = 256 * 1024;

export type BrandManifest = v.InferOutput<typeof brandManifest>;

export interface Enrichment {
  brand_name: string;
  brand_manifest: BrandManifest;
  /** The page the data came from (after redirects). */
  url: string;
}

/** A crawler failure as the caller's error: what went wrong with the site, never a 500. */
function upstream(error: unknown, what: string): ProtocolError {
  if (error instanceof CrawlerError) {
    if (error.code === 'ssrf_blocked' || error.code === 'invalid_url' || error.code === 'dns_failed')
      return new ProtocolError('INVALID_REQUEST', `domain: ${what} cannot be fetched (${error.code}: ${error.message})`, { field: 'domain' });
    if (error.code === 'timeout') return new ProtocolError('UPSTREAM_TIMEOUT', `${what} did not answer in time`);
    if (error.code === 'too_large')
      return new ProtocolError('UPSTREAM_FAILED', `${what} is larger than ${PAGE_MAX_BYTES / 1024} KB`, { details: { reason: 'too_large' } });
    if (error.code === 'bad_content_type')
      return new ProtocolError('UPSTREAM_FAILED', `${what} is not an HTML page`, { details: { reason: 'bad_content_type' } });
    return new ProtocolError('UPSTREAM_FAILED', `${what}: ${error.code}`, { details: { reason: error.code } });
  }
  return new ProtocolError('UPSTREAM_FAILED', `${what}: ${(error as Error)?.message ?? 'failed'}`);
}

/** An absolute http(s) URL for `href` relative to `base`, or null. */
function absolute(href: string | undefined, base: string): string | null {
  if (!href || href.length > 2048) return null;
  try {
    const u = new URL(href, base);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.toString() : null;
  } catch {
    return null;
  }
}

async function fetchManifest(crawler: CrawlerPort, url: string): Promise<Record<string, unknown> | null> {
  try {
    const res = await crawler.fetch(url, {
      maxBytes: MANIFEST_MAX_BYTES,
      timeoutMs: 5000,
      accept: ['application/manifest+json', 'application/json'],
      redirectPolicy: 'same-site',
    });
    if (res.status !== 200) return null;
    const doc = JSON.parse(res.text()) as unknown;
    return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : null;
  } catch {
    return null; // the manifest is optional: the page's own metadata still counts
  }
}

/**
 * Fetch a domain's homepage through the SSRF-guarded crawler (bounded size and time; HTML only)
 * and read its brand: name (og:site_name, application-name, the web manifest, the title), description,
 * logos (touch icons, icons, manifest icons, og:image) and colours (theme-color, manifest colours).
 * Nothing from the page is executed; every value is length-capped and checked against the manifest schema.
 */
export async function enrichDomain(crawler: CrawlerPort, domain: string, origin: string): Promise<Enrichment> {
  const home = `${origin.replace('{domain}', domain)}/`;
  let page: Awaited<ReturnType<CrawlerPort['fetch']>>;
  try {
    page = await crawler.fetch(home, {
      maxBytes: PAGE_MAX_BYTES,
      timeoutMs: 10_000,
      accept: ['text/html', 'application/xhtml+xml'],
      redirectPolicy: 'same-site',
      headers: { accept: 'text/html,application/xhtml+xml' },
    });
  } catch (error) {
    throw upstream(error, `the homepage of ${domain}`);
  }
  if (page.status !== 200)
    throw new ProtocolError('UPSTREAM_FAILED', `the homepage of ${domain} answered HTTP ${page.status}`, {
      details: { reason: 'status', status: page.status },
    });
  const meta = parsePage(page.text());
  const base = page.url;
  const manifestLink = meta.links.find((l) => l.rel === 'manifest');
  const manifestUrl = absolute(manifestLink?.href, base);
  const manifest = manifestUrl ? await fetchManifest(crawler, manifestUrl) : null;
  const m = (key: string) => (typeof manifest?.[key] === 'string' ? (manifest[key] as string) : undefined);

  const name = cleanText(meta.meta['og:site_name'] ?? meta.meta['application-name'] ?? m('name') ?? m('short_name') ?? meta.title ?? '', 200) || domain;
  const description = cleanText(meta.meta.description ?? meta.meta['og:description'] ?? m('description') ?? '', 2000);

  const logos: Array<{ url: string; tags: string[]; size: number }> = [];
  const addLogo = (href: string | undefined, tags: string[], size: number, relativeTo = base) => {
    const url = absolute(href, relativeTo);
    if (url && !logos.some((l) => l.url === url)) logos.push({ url, tags, size });
  };
  for (const l of meta.links) {
    if (l.rel === 'apple-touch-icon' || l.rel === 'apple-touch-icon-precomposed') addLogo(l.href, ['icon', 'apple-touch-icon'], iconSize(l.sizes) || 180);
    else if (l.rel === 'icon' || l.rel === 'shortcut') addLogo(l.href, ['icon', 'favicon'], iconSize(l.sizes));
  }
  if (Array.isArray(manifest?.icons)) {
    for (const icon of manifest.icons.slice(0, 50) as Array<Record<string, unknown>>) {
      if (icon && typeof icon.src === 'string')
        addLogo(icon.src, ['icon', 'manifest'], iconSize(typeof icon.sizes === 'string' ? icon.sizes : undefined), manifestUrl!);
    }
  }
  addLogo(meta.meta['og:image'], ['social'], 0);
  logos.sort((a, b) => b.size - a.size);

  const colors: Array<{ hex: string; type: string }> = [];
  const addColor = (value: string | undefined, type: string) => {
    const hex = normalizeColor(value);
    if (hex && !colors.some((c) => c.hex === hex)) colors.push({ hex, type });
  };
  addColor(meta.meta['theme-color'], 'primary');
  addColor(m('theme_color'), 'primary');
  addColor(meta.meta['msapplication-tilecolor'], 'secondary');
  addColor(m('background_color'), 'background');

  const candidate = {
    name,
    ...(description ? { description } : {}),
    ...(logos.length ? { logos: logos.slice(0, 10).map(({ url, tags }) => ({ url, tags })) } : {}),
    ...(colors.length ? { colors: colors.slice(0, 5) } : {}),
  };
  const checked = v.safeParse(brandManifest, candidate);
  // Every field was built to pass; a failure means a bug here, not a hostile page: keep the name only.
  const brand_manifest = checked.success ? checked.output : { name };
  return { brand_name: name, brand_manifest, url: base };
}
