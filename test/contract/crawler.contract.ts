import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { CrawlerError, type CrawlerPort } from '../../core/ports/crawler.ts';
import { TEST_CERT, TEST_KEY, crawlFixtureRoutes, tableResolver } from '../support/loopback.ts';

/** Name resolution the implementation must use instead of the system's (a table in tests). */
export interface TestDns {
  lookup(host: string): Promise<string[]>;
  resolveTxt(name: string): Promise<string[][]>;
}

export interface CrawlerConfig {
  dns: TestDns;
  /** Opt in to reaching loopback (127.0.0.1), as tests do; production never does. */
  allowLoopback: boolean;
  /** The CA (PEM) of the loopback TLS fixture, trusted instead of the system store. */
  ca: string;
}

export interface CrawlerSubject {
  port: CrawlerPort;
  close(): Promise<void>;
}

async function refusal(work: Promise<unknown>): Promise<CrawlerError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof CrawlerError) return error;
    throw error;
  }
  throw new Error('expected a CrawlerError, the request succeeded');
}

/** Every form of a non-public address, and names that must never be fetched, with the allowlist off. */
const REFUSED_URLS = [
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

/**
 * The crawler contract (core/ports/crawler.ts): the SSRF guard, redirects, limits and DNS, against
 * loopback servers. `make` is called with a test DNS table and whether loopback is allowlisted.
 */
export function crawlerContract(name: string, make: (config: CrawlerConfig) => Promise<CrawlerSubject>): void {
  describe(`crawler contract: ${name}`, () => {
    const opened: CrawlerSubject[] = [];
    const open = async (config: Omit<CrawlerConfig, 'ca'>) => {
      const subject = await make({ ...config, ca: TEST_CERT });
      opened.push(subject);
      return subject.port;
    };
    afterAll(async () => {
      for (const s of opened) await s.close();
    });

    describe('with the allowlist off: every non-public address form is refused', () => {
      const dns = tableResolver({
        'intranet.example.com': ['10.1.2.3'],
        'mixed.example.com': ['93.184.216.34', '192.168.1.10'],
        'v6private.example.com': ['fd12:3456::1'],
        'mapped.example.com': ['::ffff:127.0.0.1'],
        'public.example.com': ['93.184.216.34'],
      });
      let crawler: CrawlerPort;
      beforeAll(async () => {
        crawler = await open({ dns, allowLoopback: false });
      });

      for (const url of REFUSED_URLS) {
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

      test('an unresolvable name is dns_failed; credentials in the URL and other schemes are invalid_url', async () => {
        expect((await refusal(crawler.fetch('https://nowhere.example.com/'))).code).toBe('dns_failed');
        expect((await refusal(crawler.fetch('https://user:pw@public.example.com/'))).code).toBe('invalid_url');
        expect((await refusal(crawler.fetch('file:///etc/passwd'))).code).toBe('invalid_url');
      });

      test('an allowlisted crawler still refuses every address outside the allowlist', async () => {
        const allowlisted = await open({ dns, allowLoopback: true });
        expect((await refusal(allowlisted.fetch('https://intranet.example.com/'))).code).toBe('ssrf_blocked');
        expect((await refusal(allowlisted.fetch('https://[::1]/'))).code).toBe('ssrf_blocked');
      });

      test('TXT records: chunks joined, a missing name is an empty answer', async () => {
        const c = await open({ dns: tableResolver({}, { '_proto-owner.pub.test': [['nonce-', 'abc'], ['v=other']] }), allowLoopback: false });
        expect(await c.resolveTxt('_proto-owner.pub.test')).toEqual(['nonce-abc', 'v=other']);
        expect(await c.resolveTxt('_proto-owner.nothing.test')).toEqual([]);
      });
    });

    describe('against loopback servers (loopback allowlisted)', () => {
      let http: ReturnType<typeof Bun.serve>;
      let https: ReturnType<typeof Bun.serve>;
      const dns = tableResolver({
        'pub.test': ['127.0.0.1'],
        'www.pub.test': ['127.0.0.1'],
        'other.test': ['127.0.0.1'],
        'intranet.pub.test': ['10.0.0.7'],
      });
      let crawler: CrawlerPort;
      beforeAll(async () => {
        https = Bun.serve({ port: 0, hostname: '127.0.0.1', tls: { cert: TEST_CERT, key: TEST_KEY }, fetch: (r) => crawlFixtureRoutes(r, () => https.port!) });
        http = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => crawlFixtureRoutes(r, () => https.port!) });
        crawler = await open({ dns, allowLoopback: true });
      });
      afterAll(() => {
        http?.stop(true);
        https?.stop(true);
      });
      const H = () => `http://127.0.0.1:${http.port}`;
      const S = (host = 'pub.test') => `https://${host}:${https.port}`;

      test('a name is resolved once and the request reaches it with its name as Host (certificate checked for the name)', async () => {
        const before = dns.calls['pub.test'] ?? 0;
        const res = await crawler.fetch(`${S()}/valid.json`, { accept: ['application/json'] });
        expect(res.status).toBe(200);
        expect(JSON.parse(res.text()).served_to).toBe(`pub.test:${https.port}`);
        expect(res.url).toBe(`${S()}/valid.json`);
        expect(res.chain).toEqual([`${S()}/valid.json`]);
        expect(dns.calls['pub.test']! - before).toBe(1);
      });

      test('allowlisted loopback may use http when the caller allows it; https-only callers (the default) are refused', async () => {
        expect((await crawler.fetch(`${H()}/valid.json`, { requireHttps: false })).status).toBe(200);
        expect((await refusal(crawler.fetch(`${H()}/valid.json`))).code).toBe('invalid_url');
      });

      test('a DNS answer that changes after the check is never used (rebinding)', async () => {
        let answers = 0;
        const rebinding = tableResolver({ 'pub.test': () => (answers++ === 0 ? ['127.0.0.1'] : ['10.9.9.9']) });
        const pinned = await open({ dns: rebinding, allowLoopback: true });
        const res = await pinned.fetch(`${S()}/valid.json`);
        expect(res.status).toBe(200);
        expect(rebinding.calls['pub.test']).toBe(1);
      });

      test('an unaccepted content type is bad_content_type; a non-2xx answer is returned with its status', async () => {
        expect((await refusal(crawler.fetch(`${S()}/wrong-type`, { accept: ['application/json'] }))).code).toBe('bad_content_type');
        expect((await crawler.fetch(`${S()}/not-found`, { accept: ['application/json'] })).status).toBe(404);
      });

      test('oversized bodies are refused, by Content-Length and while streaming', async () => {
        expect((await refusal(crawler.fetch(`${S()}/big-declared`, { maxBytes: 1000 }))).code).toBe('too_large');
        expect((await refusal(crawler.fetch(`${S()}/big-streamed`, { maxBytes: 50_000 }))).code).toBe('too_large');
        expect((await crawler.fetch(`${S()}/big-declared`, { maxBytes: 5000 })).body.byteLength).toBe(5000);
      });

      test('slow headers and slow bodies time out', async () => {
        expect((await refusal(crawler.fetch(`${S()}/slow`, { timeoutMs: 300 }))).code).toBe('timeout');
        expect((await refusal(crawler.fetch(`${S()}/slow-body`, { timeoutMs: 300 }))).code).toBe('timeout');
      });

      test('a redirect within the registrable domain is followed and reported in the chain', async () => {
        const res = await crawler.fetch(`${S()}/to-same-site`);
        expect(res.status).toBe(200);
        expect(res.url).toBe(`${S('www.pub.test')}/valid.json`);
        expect(res.chain).toEqual([`${S()}/to-same-site`, `${S('www.pub.test')}/valid.json`]);
      });

      test('a redirect to another registrable domain is refused (same-site, the default), followed for any-public', async () => {
        expect((await refusal(crawler.fetch(`${S()}/to-other-site`))).code).toBe('redirect_refused');
        expect((await crawler.fetch(`${S()}/to-other-site`, { redirectPolicy: 'any-public' })).url).toBe(`${S('other.test')}/valid.json`);
      });

      test('a redirect to http is refused', async () => {
        expect((await refusal(crawler.fetch(`${S()}/to-http`))).code).toBe('redirect_refused');
      });

      test('each hop is re-checked: a redirect to a name resolving to a private address is refused', async () => {
        expect((await refusal(crawler.fetch(`${S()}/to-private`))).code).toBe('ssrf_blocked');
        expect((await refusal(crawler.fetch(`${S()}/to-private`, { redirectPolicy: 'any-public' }))).code).toBe('ssrf_blocked');
      });

      test('redirect loops and long chains stop at the limit (3 by default; 0 refuses any redirect)', async () => {
        expect((await refusal(crawler.fetch(`${S()}/loop-a`))).code).toBe('too_many_redirects');
        expect((await crawler.fetch(`${S()}/chain?n=3`)).status).toBe(200);
        expect((await refusal(crawler.fetch(`${S()}/chain?n=4`))).code).toBe('too_many_redirects');
        expect((await refusal(crawler.fetch(`${S()}/chain?n=1`, { maxRedirects: 0 }))).code).toBe('too_many_redirects');
      });
    });
  });
}
