import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { ACME, fid, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';

// Headless Chromium from Debian's packages (`apt-get install chromium`; .ci/run installs it) opens
// preview URLs of a display, a native and a video creative and checks what a person would see.
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dir, '../artifacts');
const INJECTED = '<script>window.__pwned = 1; document.title = "pwned"</script>';
const RED = 'rgb(200, 16, 46)'; // ACME's primary colour, #C8102E

const available = existsSync(CHROMIUM);
if (!available) test.skip(`skipped: ${CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it)`, () => {});

let browser: Browser | undefined;
beforeAll(async () => {
  if (!available) return;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});
afterAll(async () => browser?.close());

const promoted = {
  promoted_offerings: {
    brand_manifest: ACME,
    inline_offerings: [{ name: 'Rocket Skates', description: 'Go faster than the road runner.', landing_url: 'https://acme.example/skates' }],
  },
};

/** Build a creative (the template generator answers at once) and preview it; the preview URL. */
async function builtPreview(s: CreativeServer, target: string, assets: Record<string, unknown>, key: string): Promise<string> {
  const client = restClient(s.server, TOKEN);
  const built = await client.call('build_creative', {
    idempotency_key: key,
    target_format_id: fid(target),
    message: 'Spring sale on rocket skates',
    creative_manifest: { format_id: fid(target), assets: { ...promoted, ...assets } },
  });
  expect(built.body.status).toBe('completed');
  const preview = await client.call('preview_creative', {
    request_type: 'single',
    creative_manifest: built.body.creative_manifest,
    inputs: [{ name: 'Desktop', macros: { DEVICE_TYPE: 'desktop' } }],
  });
  expect(preview.ok).toBe(true);
  return preview.body.previews[0].preview_url;
}

/** One page for every check (a new page costs a browser context: seconds on a small machine). */
async function open(page: Page, url: string): Promise<Page> {
  const response = await page.goto(url);
  expect(response!.status()).toBe(200);
  return page;
}

/** Nothing injected ran: no global, title untouched. */
async function expectInert(page: Page) {
  expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  expect(await page.title()).toStartWith('Preview: ');
}

if (available) {
  forEachDatabase(
    'creative previews in Chromium',
    (adapter, schema) => startCreativeServer(adapter, schema),
    async (s) => s.server.close(),
    (get, adapter) => {
      test('display (HTML5), native and video previews show the brand and run no injected script', async () => {
        const s = get();
        const display = await builtPreview(s, 'display_300x250_html', {}, `browser-display-${adapter}-0001`);
        const native = await builtPreview(
          s,
          'native_standard',
          { description: { asset_type: 'text', content: `Go faster. ${INJECTED}` } },
          `browser-native-${adapter}-00001`,
        );
        const video = await builtPreview(
          s,
          'video_vast_30s',
          { video: { asset_type: 'video', url: 'https://cdn.acme.example/skates-30s.mp4', width: 1280, height: 720, duration_ms: 30000 } },
          `browser-video-${adapter}-000001`,
        );

        const page = await browser!.newPage({ viewport: { width: 1280, height: 820 } });
        // Display: the generated HTML5 banner, inside its sandboxed frame.
        const d = await open(page, display);
        const banner = d.frameLocator('iframe[data-role="creative-html"]').locator('[data-creative="banner"]');
        expect(await banner.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(RED);
        expect(await banner.locator('[data-role="sponsor"]').textContent()).toBe('Acme Rockets');
        expect(await banner.textContent()).toContain('Rocket Skates');
        await expectInert(d);

        // Native: brand colour on the frame and the call to action, the sponsor line, the injected script as text.
        const n = await open(page, native);
        expect(await n.locator('[data-role="brand-bar"]').getAttribute('data-brand-color')).toBe('#C8102E');
        expect(await n.locator('section').evaluate((el) => getComputedStyle(el).borderTopColor)).toBe(RED);
        expect(await n.locator('[data-asset="cta_text"]').evaluate((el) => getComputedStyle(el).backgroundColor)).toBe(RED);
        expect(await n.locator('[data-asset="sponsored_by"]').textContent()).toBe('Acme Rockets');
        expect(await n.locator('[data-asset="description"]').textContent()).toBe(`Go faster. ${INJECTED}`);
        const image = n.locator('article img').first();
        expect(await image.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(1200); // the hosted SVG loaded
        await expectInert(n);

        // Video: the player on the supplied file from the VAST tag, the advertiser, the brand colour.
        const v = await open(page, video);
        expect(await v.locator('video[data-role="player"]').getAttribute('src')).toBe('https://cdn.acme.example/skates-30s.mp4');
        expect(await v.locator('[data-role="advertiser"]').textContent()).toBe('Acme Rockets');
        expect(await v.locator('section').evaluate((el) => getComputedStyle(el).borderTopColor)).toBe(RED);
        await expectInert(v);

        // One picture of all three, as a buyer's page embedding the preview URLs would show them.
        // (A page of its own: the previews' policies forbid frames in that one.)
        const board = await browser!.newPage({ viewport: { width: 1280, height: 820 } });
        const frame = (url: string, w: number, h: number) =>
          `<iframe src="${url}" width="${w}" height="${h}" style="border:1px solid #ccc;vertical-align:top"></iframe>`;
        await board.setContent(
          `<body style="margin:8px;font-family:sans-serif">${frame(display, 340, 330)}${frame(native, 460, 800)}${frame(video, 440, 500)}</body>`,
        );
        await board.waitForLoadState('load');
        for (const url of [display, native, video]) {
          const embedded = board.frames().find((f) => f.url() === url);
          expect(await embedded?.locator('[data-role="creative"]').count()).toBe(1);
        }
        mkdirSync(ARTIFACTS, { recursive: true });
        await board.screenshot({ path: join(ARTIFACTS, `creative-previews-${adapter}.png`) });
        await page.close();
        await board.close();
      }, 60_000);
    },
  );
}
