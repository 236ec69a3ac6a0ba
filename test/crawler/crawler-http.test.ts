import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CrawlerError } from '../../core/ports/crawler.ts';
import { HttpCrawler } from '../../plugins/crawler-http/index.ts';
import { blockedReason } from '../../plugins/crawler-http/addresses.ts';
import { registrableDomain } from '../../plugins/crawler-http/hostnames.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import { TEST_CERT, TEST_KEY, tableResolver } from '../support/loopback.ts';

async function refusal(work: Promise<unknown>): Promise<CrawlerError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof CrawlerError) return error;
    throw error;
  }
  throw new Error('expected a CrawlerError, the request succeeded');
}

const adagents = { authorized_agents: [{ url: 'https://agent.example', authorized_for: 'all' }] };

// One handler serves both the http and the https loopback servers.
function handler(req: Request, tlsPort: () => number): Response | Promise<Response> {
  const url = new URL(req.url);
  const host = req.headers.get('host') ?? '';
  const tls = (name: string, path: string) => `https://${name}:${tlsPort()}${path}`;
  switch (url.pathname) {
    case '/valid.json':
      return Response.json({ ...adagents, served_to: host });
    case '/wrong-type':
      return new Response('<html></html>', { headers: { 'content-type': 'text/html' } });
    case '/big-declared':
      return new Response('x'.repeat(5000), { headers: { 'content-type': 'application/json' } });
    case '/big-streamed': {
      // No Content-Length: the cap must hold while streaming.
      let sent = 0;
      const stream = new ReadableStream({
        pull(controller) {
          if (sent >= 1_000_000) return controller.close();
          sent += 10_000;
          controller.enqueue(new Uint8Array(10_000).fill(32));
        },
      });
      return new Response(stream, { headers: { 'content-type': 'application/json' } });
    }
    case '/slow':
      return new Promise((resolve) => setTimeout(() => resolve(Response.json(adagents)), 3000));
    case '/slow-body': {
      const stream = new ReadableStream({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode('{"a":'));
          await Bun.sleep(3000);
          controller.enqueue(new TextEncoder().encode('1}'));
          controller.close();
        },
      });
      return new Response(stream, { headers: { 'content-type': 'application/json' } });
    }
    case '/to-same-site':
      return Response.redirect(tls('www.pub.test', '/valid.json'), 302);
    case '/to-other-site':
      return Response.redirect(tls('other.test', '/valid.json'), 302);
    case '/to-http':
      return Response.redirect(`http://pub.test:${tlsPort()}/valid.json`, 301);
    case '/to-private':
      return Response.redirect(tls('intranet.pub.test', '/valid.json'), 302);
    case '/loop-a':
      return Response.redirect('/loop-b', 302);
    case '/loop-b':
      return Response.redirect('/loop-a', 302);
    case '/chain': {
      const n = Number(url.searchParams.get('n') ?? 0);
      return n > 0 ? Response.redirect(`/chain?n=${n - 1}`, 302) : Response.json(adagents);
    }
    case '/not-found':
      return new Response('nope', { status: 404, headers: { 'content-type': 'text/plain' } });
    default:
      return new Response('not found', { status: 404 });
  }
}

describe('crawler-http against loopback servers (allowlisted)', () => {
  let http: ReturnType<typeof Bun.serve>;
  let https: ReturnType<typeof Bun.serve>;
  const resolver = tableResolver({
    'pub.test': ['127.0.0.1'],
    'www.pub.test': ['127.0.0.1'],
    'other.test': ['127.0.0.1'],
    'intranet.pub.test': ['10.0.0.7'],
  });
  let crawler: HttpCrawler;

  beforeAll(() => {
    https = Bun.serve({ port: 0, hostname: '127.0.0.1', tls: { cert: TEST_CERT, key: TEST_KEY }, fetch: (r) => handler(r, () => https.port!) });
    http = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => handler(r, () => https.port!) });
    crawler = new HttpCrawler({ allowlist: ['127.0.0.1/32'], resolver, ca: TEST_CERT });
  });
  afterAll(() => {
    http.stop(true);
    https.stop(true);
  });
  const H = () => `http://127.0.0.1:${http.port}`;
  const S = (name = 'pub.test') => `https://${name}:${https.port}`;

  test('valid JSON over https: connects to the pinned address, Host and certificate name are the host name', async () => {
    const before = resolver.calls['pub.test'] ?? 0;
    const res = await crawler.fetch(`${S()}/valid.json`, { accept: ['application/json'] });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text()).served_to).toBe(`pub.test:${https.port}`);
    expect(res.chain).toEqual([`${S()}/valid.json`]);
    expect(resolver.calls['pub.test']! - before).toBe(1);
  });

  test('allowlisted loopback may use http when the caller allows it; https-only callers are refused', async () => {
    const res = await crawler.fetch(`${H()}/valid.json`, { requireHttps: false });
    expect(res.status).toBe(200);
    expect((await refusal(crawler.fetch(`${H()}/valid.json`))).code).toBe('invalid_url');
  });

  test('a DNS answer that changes after the check is never used (rebinding)', async () => {
    let answers = 0;
    const rebinding = tableResolver({ 'pub.test': () => (answers++ === 0 ? ['127.0.0.1'] : ['10.9.9.9']) });
    const pinned = new HttpCrawler({ allowlist: ['127.0.0.1'], resolver: rebinding, ca: TEST_CERT });
    const res = await pinned.fetch(`${S()}/valid.json`);
    expect(res.status).toBe(200);
    expect(rebinding.calls['pub.test']).toBe(1);
  });

  test('a certificate that does not cover the name fails even though the address is right', async () => {
    const r = tableResolver({ 'evil.example': ['127.0.0.1'] });
    const c = new HttpCrawler({ allowlist: ['127.0.0.1'], resolver: r, ca: TEST_CERT });
    expect((await refusal(c.fetch(`https://evil.example:${https.port}/valid.json`))).code).toBe('connection_failed');
  });

  test('wrong content type is refused', async () => {
    const e = await refusal(crawler.fetch(`${S()}/wrong-type`, { accept: ['application/json'] }));
    expect(e.code).toBe('bad_content_type');
  });

  test('a non-2xx answer is returned with its status (no content-type check)', async () => {
    const res = await crawler.fetch(`${S()}/not-found`, { accept: ['application/json'] });
    expect(res.status).toBe(404);
  });

  test('oversized bodies are refused, by Content-Length and while streaming', async () => {
    expect((await refusal(crawler.fetch(`${S()}/big-declared`, { maxBytes: 1000 }))).code).toBe('too_large');
    expect((await refusal(crawler.fetch(`${S()}/big-streamed`, { maxBytes: 50_000 }))).code).toBe('too_large');
    const ok = await crawler.fetch(`${S()}/big-declared`, { maxBytes: 5000 });
    expect(ok.body.byteLength).toBe(5000);
  });

  test('slow headers and slow bodies time out', async () => {
    expect((await refusal(crawler.fetch(`${S()}/slow`, { timeoutMs: 300 }))).code).toBe('timeout');
    expect((await refusal(crawler.fetch(`${S()}/slow-body`, { timeoutMs: 300 }))).code).toBe('timeout');
  });

  test('redirect within the registrable domain is followed and reported in the chain', async () => {
    const res = await crawler.fetch(`${S()}/to-same-site`);
    expect(res.status).toBe(200);
    expect(res.url).toBe(`${S('www.pub.test')}/valid.json`);
    expect(res.chain).toHaveLength(2);
  });

  test('redirect to another registrable domain is refused (same-site), allowed for any-public', async () => {
    expect((await refusal(crawler.fetch(`${S()}/to-other-site`))).code).toBe('redirect_refused');
    const res = await crawler.fetch(`${S()}/to-other-site`, { redirectPolicy: 'any-public' });
    expect(res.url).toBe(`${S('other.test')}/valid.json`);
  });

  test('redirect to http is refused', async () => {
    expect((await refusal(crawler.fetch(`${S()}/to-http`))).code).toBe('redirect_refused');
  });

  test('each hop is re-validated: a redirect to a name resolving to 10.x is refused', async () => {
    expect((await refusal(crawler.fetch(`${S()}/to-private`))).code).toBe('ssrf_blocked');
  });

  test('redirect loops and long chains stop at the limit', async () => {
    expect((await refusal(crawler.fetch(`${S()}/loop-a`))).code).toBe('too_many_redirects');
    expect((await crawler.fetch(`${S()}/chain?n=3`)).status).toBe(200);
    expect((await refusal(crawler.fetch(`${S()}/chain?n=4`))).code).toBe('too_many_redirects');
    expect((await refusal(crawler.fetch(`${S()}/chain?n=1`, { maxRedirects: 0 }))).code).toBe('too_many_redirects');
  });

  test('TXT records: chunks joined, a missing name is an empty answer', async () => {
    const r = tableResolver({}, { '_proto-owner.pub.test': [['nonce-', 'abc'], ['v=other']] });
    const c = new HttpCrawler({ resolver: r });
    expect(await c.resolveTxt('_proto-owner.pub.test')).toEqual(['nonce-abc', 'v=other']);
    expect(await c.resolveTxt('_proto-owner.nothing.test')).toEqual([]);
  });
});

describe('SSRF guard with the allowlist off: every address form is refused', () => {
  const resolver = tableResolver({
    'intranet.example.com': ['10.1.2.3'],
    'mixed.example.com': ['93.184.216.34', '192.168.1.10'],
    'v6private.example.com': ['fd12:3456::1'],
    'mapped.example.com': ['::ffff:127.0.0.1'],
    'public.example.com': ['93.184.216.34'],
  });
  const crawler = new HttpCrawler({ resolver });

  const urls = [
    'https://127.0.0.1/',
    'https://127.1/',
    'https://0x7f.1/',
    'https://0x7f000001/',
    'https://2130706433/',
    'https://017700000001/',
    'https://0177.0.0.1/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[::127.0.0.1]/',
    'https://[::ffff:0:10.0.0.1]/',
    'https://[2002:7f00:1::]/',
    'https://[2002:a00:1::1]/',
    'https://[64:ff9b::127.0.0.1]/',
    'https://[64:ff9b::a00:1]/',
    'https://[64:ff9b:1::1]/',
    'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
    'https://[fc00::1]/',
    'https://[fd00::1]/',
    'https://[fe80::1]/',
    'https://[::]/',
    'https://[ff02::1]/',
    'https://0.0.0.0/',
    'https://10.0.0.1/',
    'https://100.64.0.1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://172.16.0.1/',
    'https://172.31.255.255/',
    'https://192.168.0.1/',
    'https://198.18.0.1/',
    'https://198.19.255.255/',
    'https://224.0.0.1/',
    'https://239.255.255.250/',
    'https://240.0.0.1/',
    'https://255.255.255.255/',
    'https://localhost/',
    'https://api.localhost/',
    'https://printer.local/',
    'https://metadata.google.internal/',
    'https://intranet/',
    'https://intranet.example.com/',
    'https://mixed.example.com/',
    'https://v6private.example.com/',
    'https://mapped.example.com/',
    'http://127.0.0.1:8080/',
  ];
  for (const url of urls) {
    test(`refuses ${url}`, async () => {
      const e = await refusal(crawler.fetch(url));
      expect(['ssrf_blocked', 'invalid_url']).toContain(e.code);
      // Only the scheme-less checks may say invalid_url; every address form is an SSRF refusal.
      if (!url.startsWith('http://')) expect(e.code).toBe('ssrf_blocked');
    });
  }

  test('assertPublicHost refuses the same forms and accepts a public name', async () => {
    for (const host of ['0x7f.1', '2130706433', '[::ffff:127.0.0.1]', 'intranet.example.com', 'printer.local', 'x.internal', '10.0.0.1']) {
      expect((await refusal(crawler.assertPublicHost(host))).code).toBe('ssrf_blocked');
    }
    await crawler.assertPublicHost('public.example.com');
  });

  test('an unresolvable name is dns_failed, a URL with credentials is invalid', async () => {
    expect((await refusal(crawler.fetch('https://nowhere.example.com/'))).code).toBe('dns_failed');
    expect((await refusal(crawler.fetch('https://user:pw@public.example.com/'))).code).toBe('invalid_url');
    expect((await refusal(crawler.fetch('file:///etc/passwd'))).code).toBe('invalid_url');
  });

  test('the allowlist admits loopback only; the plugin option rejects anything else', () => {
    expect(() => new HttpCrawler({ allowlist: ['10.0.0.0/8'] })).toThrow(/loopback/);
    expect(() => crawlerHttp({ allowlist: ['192.168.0.1'] })).toThrow(/allowlist/);
    expect(() => crawlerHttp({ allowlist: ['127.0.0.1', '::1'] })).not.toThrow();
  });

  test('an allowlisted crawler still refuses addresses outside the allowlist', async () => {
    const c = new HttpCrawler({ allowlist: ['127.0.0.1'], resolver });
    expect((await refusal(c.fetch('https://intranet.example.com/'))).code).toBe('ssrf_blocked');
    expect((await refusal(c.fetch('https://[::1]/'))).code).toBe('ssrf_blocked');
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
  const resolver = tableResolver(Object.fromEntries(
    ['a.example.co.uk', 'b.example.co.uk', 'example.co.uk', 'other.co.uk', 'victim.github.io', 'attacker.github.io', 'github.io'].map((n) => [n, ['127.0.0.1']]),
  ));
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
  const vectors = (JSON.parse(readFileSync(join(import.meta.dir, '../../../shared/reference/test-vectors/adagents-discovery-redirects.json'), 'utf8')) as {
    vectors: Array<{ id: string; target: 'well_known' | 'authoritative_location'; origin_url: string; redirect_chain: Array<{ status: number; location: string }>; expected: { result: string; final_url?: string; reason?: string } }>;
  }).vectors;
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
      const request = { headers: { 'x-vector': v.id }, ...(v.target === 'authoritative_location' ? { maxRedirects: 0 } : { maxRedirects: 3, redirectPolicy: 'same-site' as const }) };
      const work = crawler.fetch(withPort(v.origin_url), request);
      if (v.expected.result === 'resolved') {
        const res = await work;
        expect(withoutPort(res.url)).toBe(v.expected.final_url!);
      } else {
        const e = await refusal(work);
        const expected: Record<string, CrawlerError["code"]> = {
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
