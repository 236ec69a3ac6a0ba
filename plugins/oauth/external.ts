import type { ClockPort } from '../../core/ports/clock.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';

const MAX_BYTES = 256 * 1024;

async function getJson(crawler: CrawlerPort, url: string): Promise<Record<string, unknown>> {
  const res = await crawler.fetch(url, {
    maxBytes: MAX_BYTES,
    timeoutMs: 10_000,
    accept: ['application/json', 'application/jwk-set+json'],
    redirectPolicy: 'same-site',
  });
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  const doc = JSON.parse(res.text()) as unknown;
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(`${url} is not a JSON object`);
  return doc as Record<string, unknown>;
}

/**
 * An external issuer's keys: its metadata (OpenID Connect discovery, else RFC 8414) names the
 * `jwks_uri`; both are fetched through the SSRF-guarded crawler. The JWKS is kept for `ttlMs`, and
 * concurrent first requests share one fetch.
 */
export function discoverIssuer(crawler: CrawlerPort, issuer: string, ttlMs: number, clock: ClockPort) {
  let jwksUri: Promise<string> | null = null;
  let cached: { keys: unknown[]; at: number } | null = null;
  let inflight: Promise<{ keys: unknown[] }> | null = null;

  const metadata = async (): Promise<string> => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      try {
        const doc = await getJson(crawler, issuer + path);
        if (doc.issuer !== issuer) throw new Error(`metadata names issuer ${String(doc.issuer)}, expected ${issuer}`);
        if (typeof doc.jwks_uri !== 'string') throw new Error('metadata has no jwks_uri');
        return doc.jwks_uri;
      } catch (error) {
        if (path.endsWith('authorization-server')) throw error;
      }
    }
    throw new Error('unreachable');
  };

  return {
    async jwks(fresh: boolean): Promise<{ keys: unknown[] }> {
      if (!fresh && cached && clock.now().getTime() - cached.at < ttlMs) return { keys: cached.keys };
      inflight ??= (async () => {
        try {
          jwksUri ??= metadata();
          let uri: string;
          try {
            uri = await jwksUri;
          } catch (error) {
            jwksUri = null; // discovery failed: try it again next time
            throw error;
          }
          const doc = await getJson(crawler, uri);
          const keys = Array.isArray(doc.keys) ? doc.keys : [];
          cached = { keys, at: clock.now().getTime() };
          return { keys };
        } finally {
          inflight = null;
        }
      })();
      return inflight;
    },
  };
}
