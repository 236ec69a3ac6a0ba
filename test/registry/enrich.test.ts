import { afterAll, expect, test } from 'bun:test';
import auth from '../../plugins/auth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import { TEST_CERT, loopbackResolver, startPublisherWeb } from '../support/loopback.ts';

const web = startPublisherWeb();
afterAll(() => web.stop());
const html = (body: string) => ({ body, type: 'text/html; charset=utf-8' });

web.set(
  'brand.pub.test',
  '/',
  html(`<!doctype html><html><head>
  <title>Acme Rockets &amp; Co — Home</title>
  <meta property="og:site_name" content="Acme Rockets">
  <meta name="description" content="Rockets &amp; more since 1949.">
  <meta name="theme-color" content="#C00">
  <link rel="apple-touch-icon" sizes="180x180" href="/touch.png">
  <link rel="icon" href="/favicon.ico">
  <link rel="manifest" href="/site.webmanifest">
  <meta property="og:image" content="https://brand.pub.test/og.png">
</head><body><h1>Welcome</h1></body></html>`),
);
web.set('brand.pub.test', '/site.webmanifest', {
  body: { name: 'Acme Rockets App', background_color: '#ffffff', icons: [{ src: 'icons/512.png', sizes: '512x512' }] },
  type: 'application/manifest+json',
});
// Hostile: meta tags inside scripts and comments, a javascript: icon, broken markup.
web.set(
  'hostile.pub.test',
  '/',
  html(`<html><head>
  <script>document.write('<meta name="description" content="from a script">'); window.pwned = true;</script>
  <!-- <meta property="og:site_name" content="from a comment"> -->
  <style>.x{}</style><meta name=application-name content=Hostile&#x20;Site>
  <link rel=icon href="javascript:alert(1)"><link rel="icon" href="data:image/png;base64,AAAA">
  <meta name="theme-color" content="red; background:url(x)">
  <meta name="description" content="<b>bold</b> claims
     over lines">
  <title>unterminated title <meta name="x"
</head`),
);
web.set('huge.pub.test', '/', html(`<html><head><title>Huge</title></head><body>${'x'.repeat(1_200_000)}</body></html>`));
web.set('json.pub.test', '/', { body: { not: 'html' }, type: 'application/json' });
web.set('community.pub.test', '/', html('<html><head><title>Community Site</title></head></html>'));

forEachDatabase(
  'brand enrichment',
  (adapter, schema) =>
    startServer(adapter, schema, [
      auth(),
      rateLimit({ pruneIntervalMs: 0 }),
      crawlerHttp({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test'], { 'intranet.pub.test': ['10.0.0.8'] }), ca: TEST_CERT }),
      registryBrands({ enrichOrigin: web.origin }),
      restHost(),
    ]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();
    // Distinct client addresses are not available on loopback: each test spreads its calls under the per-IP limit.
    const enrich = (domain: string) => s().fetch(`/api/brands/enrich?domain=${domain}`);

    test('name, description, logos and colours from the page and its manifest; saved as enriched by system; cached', async () => {
      const res = await enrich('brand.pub.test');
      expect(res.status).toBe(200);
      const body = await res.json();
      const port = web.port;
      expect(body).toMatchObject({
        domain: 'brand.pub.test',
        brand_name: 'Acme Rockets',
        source: 'enriched',
        saved: true,
        existing_source: null,
        cached: false,
        brand_manifest: {
          name: 'Acme Rockets',
          description: 'Rockets & more since 1949.',
          colors: [
            { hex: '#cc0000', type: 'primary' },
            { hex: '#ffffff', type: 'background' },
          ],
        },
      });
      expect(body.brand_manifest.logos.map((l: any) => l.url)).toEqual([
        `https://brand.pub.test:${port}/icons/512.png`,
        `https://brand.pub.test:${port}/touch.png`,
        `https://brand.pub.test:${port}/favicon.ico`,
        'https://brand.pub.test/og.png',
      ]);
      const resolved = await (await s().fetch('/api/brands/resolve?domain=brand.pub.test')).json();
      expect(resolved).toMatchObject({ brand_name: 'Acme Rockets', source: 'enriched', brand_manifest: { name: 'Acme Rockets' } });
      const history = await (await s().fetch('/api/brands/history?domain=brand.pub.test')).json();
      expect(history.revisions).toEqual([expect.objectContaining({ revision_number: 1, editor_name: 'system', source: 'enriched' })]);

      const hits = web.hits('brand.pub.test', '/');
      const again = await (await enrich('brand.pub.test')).json();
      expect(again).toMatchObject({ cached: true, saved: false, existing_source: 'enriched' });
      expect(web.hits('brand.pub.test', '/')).toBe(hits);
    });

    test('hostile HTML: nothing from scripts or comments, no javascript: or data: URLs, broken markup tolerated', async () => {
      const body = await (await enrich('hostile.pub.test')).json();
      expect(body.brand_name).toBe('Hostile Site');
      expect(body.brand_manifest.description).toBe('<b>bold</b> claims over lines');
      expect(body.brand_manifest.logos).toBeUndefined();
      expect(body.brand_manifest.colors).toBeUndefined();
      expect(JSON.stringify(body)).not.toContain('from a script');
      expect(JSON.stringify(body)).not.toContain('from a comment');
    });

    test('bounded: a page over 1 MB, a non-HTML answer, a missing page and a private address are clear errors', async () => {
      const huge = await enrich('huge.pub.test');
      expect(huge.status).toBe(502);
      expect((await huge.json()).message).toContain('larger than 1024 KB');
      const json = await enrich('json.pub.test');
      expect(json.status).toBe(502);
      expect((await json.json()).message).toContain('not an HTML page');
      const missing = await enrich('missing.pub.test');
      expect(missing.status).toBe(502);
      expect((await missing.json()).message).toContain('HTTP 404');
      const intranet = await enrich('intranet.pub.test');
      expect(intranet.status).toBe(400);
      expect((await intranet.json()).field).toBe('domain');
      expect((await s().fetch('/api/brands/resolve?domain=huge.pub.test')).status).toBe(404);
    });

    test('a better source wins: a community brand is not replaced; per-IP rate limit', async () => {
      const { key } = await newKey(s().deployment);
      expect((await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'community.pub.test', brand_name: 'Ours' } })).status).toBe(
        200,
      );
      const body = await (await enrich('community.pub.test')).json();
      expect(body).toMatchObject({ brand_name: 'Community Site', saved: false, existing_source: 'community' });
      expect((await (await s().fetch('/api/brands/resolve?domain=community.pub.test')).json()).brand_name).toBe('Ours');

      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await enrich('brand.pub.test')).status);
      expect(statuses).toContain(429);
      expect((await enrich('brand.pub.test')).headers.get('retry-after')).not.toBeNull();
    });
  },
);
