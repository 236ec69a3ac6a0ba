import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { ManualTimers } from '../../core/scheduler.ts';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { PREVIEW_CSP } from '../../plugins/creative/render.ts';
import { fid, nativeManifest, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';

const PRUNE_MS = 60_000;
const INJECTED = '<script>window.__pwned = 1; document.title = "pwned"</script>';

interface Env {
  s: CreativeServer;
  clock: ManualClock;
  timers: ManualTimers;
}

forEachDatabase<Env>(
  'creative previews',
  async (adapter, schema) => {
    const clock = new ManualClock(new Date('2031-05-01T12:00:00Z'));
    const timers = new ManualTimers();
    const s = await startCreativeServer(adapter, schema, {
      overrides: [[Clock, clock]],
      timers,
      creative: { previewTtlSeconds: 3600, assetTtlSeconds: 7200, pruneIntervalMs: PRUNE_MS },
    });
    return { s, clock, timers };
  },
  async ({ s }) => s.server.close(),
  (get) => {
    const client = () => restClient(get().s.server, TOKEN);
    const db = () => get().s.server.deployment.get(Database);
    const count = async (table: string) => (await db().query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(table)}`))[0]!.n;
    const prune = async () => {
      get().timers.advance(PRUNE_MS);
      await get().s.server.deployment.scheduler.idle();
    };

    test('served pages carry the strict policy and render untrusted text escaped', async () => {
      const manifest = nativeManifest({ description: { asset_type: 'text', content: `Fast skates ${INJECTED}` } });
      const { body } = await client().call('preview_creative', { request_type: 'single', creative_manifest: manifest });
      const page = await fetch(body.previews[0].preview_url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toBe(PREVIEW_CSP);
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await page.text();
      expect(html).not.toContain('<script');
      expect(html).toContain('Fast skates &lt;script&gt;window.__pwned = 1; document.title = &quot;pwned&quot;&lt;/script&gt;');
    });

    test('concurrent requests (stored together) each get their own previews, in their own formats', async () => {
      const html = (n: number) => ({
        format_id: fid('display_300x250_html'),
        assets: { html_creative: { asset_type: 'html', content: `<div>Banner ${n}</div>` } },
      });
      const native = (n: number) => nativeManifest({ title: { asset_type: 'text', content: `Skates ${n}` } });
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, n) =>
          client().call('preview_creative', { request_type: 'batch', requests: [{ creative_manifest: native(n) }, { creative_manifest: html(n) }] }),
        ),
      );
      for (const [n, { body }] of answers.entries()) {
        const [a, b] = body.results.map((r: any) => r.response.previews[0].preview_url as string);
        const [pa, pb] = await Promise.all([fetch(a!), fetch(b!)]);
        expect([pa.status, pb.status]).toEqual([200, 200]);
        const [ha, hb] = await Promise.all([pa.text(), pb.text()]);
        expect(ha).toContain('data-preview-format="native_standard"');
        expect(ha).toContain(`Skates ${n}</h2>`);
        expect(hb).toContain('data-preview-format="display_300x250_html"');
        expect(hb).toContain(`Banner ${n}`);
      }
    });

    test("a creative's own HTML renders only inside a script-less sandboxed frame", async () => {
      const manifest = {
        format_id: fid('display_300x250_html'),
        assets: {
          html_creative: { asset_type: 'html', content: `<div style="background:#C8102E">Acme</div>${INJECTED}<img src=x onerror="window.__pwned=2">` },
        },
      };
      for (const output_format of ['url', 'html'] as const) {
        const { body } = await client().call('preview_creative', { request_type: 'single', creative_manifest: manifest, output_format });
        const html = output_format === 'url' ? await (await fetch(body.previews[0].preview_url)).text() : body.previews[0].preview_html;
        // The markup travels only as an escaped srcdoc of a sandbox="" iframe with its own no-script policy.
        expect(html).not.toContain('<script');
        expect(html).not.toContain('<img src=x');
        expect(html).toMatch(
          /<iframe data-role="creative-html" title="Creative" sandbox="" [^>]*srcdoc="&lt;meta http-equiv=&quot;Content-Security-Policy&quot; content=&quot;script-src &#39;none&#39;/,
        );
      }
    });

    test('stored previews expire: 410 after expires_at, before and after the prune job removes them; unknown ids 404', async () => {
      const { clock } = get();
      // Too large for a stateless link (incompressible text): stored rows.
      const long = { asset_type: 'text', content: Buffer.from(crypto.getRandomValues(new Uint8Array(2400))).toString('base64') };
      const { body } = await client().call('preview_creative', {
        request_type: 'single',
        creative_manifest: nativeManifest({ description: long }),
        inputs: [{ name: 'a' }, { name: 'b' }],
      });
      expect(Date.parse(body.expires_at)).toBe(clock.now().getTime() + 3600_000);
      const urls: string[] = body.previews.map((p: any) => p.preview_url);
      expect(new Set(urls).size).toBe(2);
      for (const url of urls) expect(url).toMatch(/\/previews\/[A-Za-z0-9_-]{24}\.[0-9a-z]+$/);
      expect((await fetch(urls[0]!)).status).toBe(200);

      const stored = await count('creative_previews');
      await prune(); // nothing has expired yet
      expect(await count('creative_previews')).toBe(stored);

      clock.advance(3600_000);
      expect((await fetch(urls[0]!)).status).toBe(410);
      await prune();
      expect(await count('creative_previews')).toBe(0);
      expect((await fetch(urls[1]!)).status).toBe(410);

      const base = get().s.server.base;
      expect((await fetch(`${base}/previews/${'A'.repeat(24)}.zzzzzz`)).status).toBe(404);
      expect((await fetch(`${base}/previews/not-a-preview-id`)).status).toBe(404);
    });

    test('generated files are served until their expiry, then 410, then pruned', async () => {
      const { clock } = get();
      const { body } = await client().call('build_creative', {
        idempotency_key: 'preview-files-0000000001',
        creative_manifest: {
          format_id: fid('native_content'),
          assets: {
            headline: { asset_type: 'text', content: 'Rocket Skates' },
            body: { asset_type: 'text', content: 'Fast.' },
            thumbnail: { asset_type: 'image', url: 'https://cdn.acme.example/t.jpg', width: 300, height: 300 },
            click_url: { asset_type: 'url', url: 'https://acme.example/' },
            disclosure: { asset_type: 'text', content: 'Sponsored by Acme' },
          },
        },
        target_format_id: fid('display_728x90_image'),
      });
      const url = body.creative_manifest.assets.banner_image.url as string;
      expect(Date.parse(body.expires_at)).toBe(clock.now().getTime() + 7200_000);
      const file = await fetch(url);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-security-policy')).toContain('sandbox');
      expect(await file.text()).toStartWith('<svg xmlns="http://www.w3.org/2000/svg" width="728" height="90"');
      clock.advance(7200_000);
      expect((await fetch(url)).status).toBe(410);
      await prune();
      expect(await count('creative_assets')).toBe(0);
      expect((await fetch(url)).status).toBe(404);
    });
  },
);
