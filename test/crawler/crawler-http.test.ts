import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrawlerError } from '../../core/ports/crawler.ts';
import { HttpCrawler } from '../../plugins/crawler-http/index.ts';
import { blockedReason } from '../../plugins/crawler-http/addresses.ts';
import { registrableDomain } from '../../plugins/crawler-http/hostnames.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import { FIXTURE_ADAGENTS as adagents, TEST_CERT, TEST_KEY, crawlFixtureRoutes, tableResolver } from '../support/loopback.ts';
import { REFERENCE } from '../support/reference.ts';

// The port's behaviour (SSRF guard, redirects, limits, DNS) is the crawler contract
// (test/contract/crawler.contract.ts); these are crawler-http's own details.

async function refusal(work: Promise<unknown>): Promise<CrawlerError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof CrawlerError) return error;
    throw error;
  }
  throw new Error('expected a CrawlerError, the request succeeded');
}

describe('crawler-http: pinning keeps TLS verification for the name', () => {
  let https: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    https = Bun.serve({ port: 0, hostname: '127.0.0.1', tls: { cert: TEST_CERT, key: TEST_KEY }, fetch: (r) => crawlFixtureRoutes(r, () => https.port!) });
  });
  afterAll(() => https.stop(true));

  test('a certificate that does not cover the name fails even though the address is right', async () => {
    const r = tableResolver({ 'evil.example': ['127.0.0.1'] });
    const c = new HttpCrawler({ allowlist: ['127.0.0.1'], resolver: r, ca: TEST_CERT });
    expect((await refusal(c.fetch(`https://evil.example:${https.port}/valid.json`))).code).toBe('connection_failed');
  });
});

describe('crawler-http: address classification, registrable domains, options', () => {
  test('the allowlist admits loopback only; the plugin option rejects anything else', () => {
    expect(() => new HttpCrawler({ allowlist: ['10.0.0.0/8'] })).toThrow(/loopback/);
    expect(() => crawlerHttp({ allowlist: ['192.168.0.1'] })).toThrow(/allowlist/);
    expect(() => crawlerHttp({ allowlist: ['127.0.0.1', '::1'] })).not.toThrow();
  });

  test('public addresses classify as public, including mapped forms of public IPv4', () => {
    for (const ip of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1']) expect(blockedReason(ip)).toBeNull();
  });

  test('registrable domain follows the Public Suffix List (ICANN and private sections)', () => {
    expect(registrableDomain('www.news.example.com')).toBe('example.com');
    expect(registrableDomain('www.bbc.co.uk')).toBe('bbc.co.uk');
    expect(registrableDomain('example.com')).toBe('example.com');
    expect(registrableDomain('A.Example.CO.UK.')).toBe('example.co.uk');
    // Suffixes a short hand-written list misses: the full list knows them.
    expect(registrableDomain('www.city.kawasaki.jp')).toBe('city.kawasaki.jp');
    expect(registrableDomain('shop.example.com.de')).toBe('example.com.de');
    expect(registrableDomain('a.b.example.gov.br')).toBe('example.gov.br');
    // Private section: each tenant of a hosting suffix is its own site.
    expect(registrableDomain('alice.github.io')).toBe('alice.github.io');
    expect(registrableDomain('www.alice.github.io')).toBe('alice.github.io');
    expect(registrableDomain('bucket.s3.amazonaws.com')).toBe('bucket.s3.amazonaws.com');
    // A public suffix on its own has no registrable domain: it is only ever same-site with itself.
    expect(registrableDomain('github.io')).toBe('github.io');
    expect(registrableDomain('co.uk')).toBe('co.uk');
    // IPs are their own site; unknown TLDs use the default rule.
    expect(registrableDomain('127.0.0.1')).toBe('127.0.0.1');
    expect(registrableDomain('[::1]')).toBe('[::1]');
    expect(registrableDomain('www.pub.test')).toBe('pub.test');
  });
});

describe('same-site redirects decided by the Public Suffix List (loopback TLS)', () => {
  let server: ReturnType<typeof Bun.serve>;
  // The test certificate covers example.co.uk, *.example.co.uk, victim.github.io and attacker.github.io.
  // A refused hop is judged before any connection, so other.co.uk needs no certificate.
  const resolver = tableResolver(
    Object.fromEntries(
      ['a.example.co.uk', 'b.example.co.uk', 'example.co.uk', 'other.co.uk', 'victim.github.io', 'attacker.github.io', 'github.io'].map((n) => [
        n,
        ['127.0.0.1'],
      ]),
    ),
  );
  const crawler = new HttpCrawler({ allowlist: ['127.0.0.1'], resolver, ca: TEST_CERT });
  const at = (host: string, path = '/doc.json') => `https://${host}:${server.port}${path}`;

  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      tls: { cert: TEST_CERT, key: TEST_KEY },
      fetch(req) {
        const to = new URL(req.url).searchParams.get('to');
        if (to) return new Response(null, { status: 302, headers: { location: `https://${to}:${server.port}/doc.json` } });
        return Response.json({ served_to: req.headers.get('host') });
      },
    });
  });
  afterAll(() => server.stop(true));

  test('a.example.co.uk -> b.example.co.uk is followed (same registrable domain under co.uk)', async () => {
    const res = await crawler.fetch(at('a.example.co.uk', '/r?to=b.example.co.uk'));
    expect(res.status).toBe(200);
    expect(res.url).toBe(at('b.example.co.uk'));
    expect(JSON.parse(res.text()).served_to).toBe(`b.example.co.uk:${server.port}`);
  });

  test('example.co.uk -> other.co.uk is refused (co.uk is a public suffix, not a site)', async () => {
    const e = await refusal(crawler.fetch(at('example.co.uk', '/r?to=other.co.uk')));
    expect(e.code).toBe('redirect_refused');
    expect(e.message).toContain('other.co.uk');
  });

  test('github.io user sites are different sites; the bare suffix is not the same site as a tenant', async () => {
    expect((await refusal(crawler.fetch(at('victim.github.io', '/r?to=attacker.github.io')))).code).toBe('redirect_refused');
    expect((await refusal(crawler.fetch(at('victim.github.io', '/r?to=github.io')))).code).toBe('redirect_refused');
    expect((await crawler.fetch(at('victim.github.io', '/r?to=attacker.github.io'), { redirectPolicy: 'any-public' })).url).toBe(at('attacker.github.io'));
  });
});

describe('conformance vectors: adagents.json discovery redirects (reference/test-vectors)', () => {
  const vectors = (
    JSON.parse(readFileSync(join(REFERENCE, 'test-vectors/adagents-discovery-redirects.json'), 'utf8')) as {
      vectors: Array<{
        id: string;
        target: 'well_known' | 'authoritative_location';
        origin_url: string;
        redirect_chain: Array<{ status: number; location: string }>;
        expected: { result: string; final_url?: string; reason?: string };
      }>;
    }
  ).vectors;
  let server: ReturnType<typeof Bun.serve>;
  // Every URL of every chain answers its next hop; the last hop answers a document.
  const hops = new Map<string, { status: number; location: string }>();
  for (const v of vectors) {
    let from = v.origin_url;
    for (const hop of v.redirect_chain) {
      hops.set(`${v.id}|${from}`, hop);
      from = hop.location;
    }
  }
  const names = new Set(vectors.flatMap((v) => [v.origin_url, ...v.redirect_chain.map((h) => h.location)]).map((u) => new URL(u).hostname));
  const resolver = tableResolver(Object.fromEntries([...names].map((n) => [n, ['127.0.0.1']])));
  const crawler = new HttpCrawler({ allowlist: ['127.0.0.1'], resolver, ca: TEST_CERT });
  const withPort = (u: string) => {
    const url = new URL(u);
    url.port = String(server.port);
    return url.href;
  };
  const withoutPort = (u: string) => {
    const url = new URL(u);
    url.port = '';
    return url.href;
  };

  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      tls: { cert: TEST_CERT, key: TEST_KEY },
      fetch(req) {
        const id = req.headers.get('x-vector') ?? '';
        const hop = hops.get(`${id}|${withoutPort(req.url)}`);
        if (hop) return new Response(null, { status: hop.status, headers: { location: withPort(hop.location) } });
        return Response.json(adagents);
      },
    });
  });
  afterAll(() => server.stop(true));

  for (const v of vectors) {
    test(`${v.id}: ${v.expected.result}`, async () => {
      // Initial fetch: same-site, 3 hops. authoritative_location: no redirect at all.
      const request = {
        headers: { 'x-vector': v.id },
        ...(v.target === 'authoritative_location' ? { maxRedirects: 0 } : { maxRedirects: 3, redirectPolicy: 'same-site' as const }),
      };
      const work = crawler.fetch(withPort(v.origin_url), request);
      if (v.expected.result === 'resolved') {
        const res = await work;
        expect(withoutPort(res.url)).toBe(v.expected.final_url!);
      } else {
        const e = await refusal(work);
        const expected: Record<string, CrawlerError['code']> = {
          cross_registrable_domain: 'redirect_refused',
          scheme_downgrade: 'redirect_refused',
          too_many_redirects: 'too_many_redirects',
          redirect_on_authoritative_location: 'too_many_redirects',
        };
        expect(e.code).toBe(expected[v.expected.reason!]!);
      }
    });
  }
});
