import { ProtocolError } from '../../core/errors.ts';
import { CrawlerError, type CrawlerPort } from '../../core/ports/crawler.ts';
import type { RateLimiterPort } from '../../core/ports/rate-limit.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import { TtlCache } from '../../lib/cache.ts';

export interface GuardOptions {
  /** Probes per client address per minute, across instances. */
  perIpPerMinute: number;
  /** Probes of one target host per minute, whoever asks, across instances. */
  perTargetPerMinute: number;
  /** Probes running at once on this instance (each makes several outbound requests). */
  maxConcurrent: number;
  /** How long an answer (or a failure) is served again without probing. */
  cacheSeconds: number;
  /** Ports besides the scheme's default that outbound probe requests may use. */
  allowedPorts: readonly number[];
}

/**
 * What keeps the public probes from being an amplifier or a port scanner: per-IP and per-target
 * rate limits (shared through the RateLimiter port), a cap on concurrent probes, a short cache of
 * answers, and outbound requests to default ports only (unless configured).
 */
export function createProbeGuard(deps: { limiter: RateLimiterPort | undefined; clock: ClockPort }, o: GuardOptions) {
  const cache = new TtlCache<string, { ok: true; value: unknown } | { ok: false; error: ProtocolError }>(1000, o.cacheSeconds * 1000, () =>
    deps.clock.now().getTime(),
  );
  let running = 0;

  const consume = async (key: string, limit: number, what: string) => {
    if (!deps.limiter) return;
    const decision = await deps.limiter.consume(key, limit, 60);
    if (!decision.allowed)
      throw new ProtocolError('RATE_LIMITED', `Rate limit exceeded: ${limit} probes per minute ${what}`, { retryAfter: decision.retryAfter });
  };

  /** Refuse an outbound URL on a port that is neither the scheme's default nor configured. */
  const checkPort = (raw: string) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return; // the crawler refuses it with its own reason
    }
    if (url.port && !o.allowedPorts.includes(Number(url.port))) {
      throw new CrawlerError(
        'ssrf_blocked',
        `Port ${url.port} is not probed (only the default ports${o.allowedPorts.length ? ` and ${o.allowedPorts.join(', ')}` : ''})`,
      );
    }
  };

  return {
    /** The crawler every probe uses: same guard as crawling, plus the port rule on every request. */
    crawler(inner: CrawlerPort): CrawlerPort {
      return {
        async fetch(url, request) {
          checkPort(url);
          return inner.fetch(url, request);
        },
        assertPublicHost: (host) => inner.assertPublicHost(host),
        resolveTxt: (name) => inner.resolveTxt(name),
      };
    },

    /** Run one probe of `target` (a URL or a domain) for a client, under every limit; `key` identifies the answer. */
    async run<T>(ip: string, target: string, key: string, probe: () => Promise<T>): Promise<T> {
      await consume(`probes.ip:${ip}`, o.perIpPerMinute, 'per client');
      const hit = cache.get(key);
      if (hit) {
        if (hit.ok) return hit.value as T;
        throw hit.error;
      }
      let host = target.toLowerCase();
      try {
        host = new URL(target).hostname.toLowerCase();
      } catch {}
      await consume(`probes.target:${host}`, o.perTargetPerMinute, 'per target');
      if (running >= o.maxConcurrent) {
        throw new ProtocolError('SERVICE_UNAVAILABLE', 'Too many probes are running; retry shortly', { retryAfter: 5 });
      }
      running++;
      try {
        const value = await probe();
        cache.set(key, { ok: true, value });
        return value;
      } catch (error) {
        // A refused URL (400) is the caller's mistake and cheap to repeat; an upstream failure is cached too.
        if (error instanceof ProtocolError && error.status >= 500) cache.set(key, { ok: false, error });
        throw error;
      } finally {
        running--;
      }
    },
  };
}

export type ProbeGuard = ReturnType<typeof createProbeGuard>;
