import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import inventoryDb from '../../plugins/inventory-db/index.ts';
import creative from '../../plugins/creative/index.ts';
import salesAccounts from '../../plugins/sales-accounts/index.ts';
import salesCreatives from '../../plugins/sales-creatives/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import { forEachDatabase } from '../support/db.ts';
import { freePort, startServer, type TestServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';

/**
 * A served tag as a viewer's browser sees it: the HTML serving tag of a library creative in a page,
 * its banner loaded from loopback, the impression pixel and the click-through reaching the agent's
 * tracker route, and get_creative_delivery counting them (screenshot test/artifacts/served-tag.png).
 */
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dir, '../artifacts');
const TOKEN = 'served-tag-token-0123456789abcdef';
const AGENT_URL = 'https://creative.test.example';
const ACCOUNT = { brand: { domain: 'acme.example' }, operator: 'acme.example' };
const fid = (id: string) => ({ agent_url: AGENT_URL, id });
const hasChromium = existsSync(CHROMIUM);
const BANNER_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="250" viewBox="0 0 300 250"><rect width="300" height="250" fill="#0D47A1"/><circle cx="230" cy="70" r="40" fill="#FFC107"/><text x="24" y="150" font-family="sans-serif" font-size="34" font-weight="700" fill="#fff">Acme Rockets</text><text x="24" y="190" font-family="sans-serif" font-size="18" fill="#BBDEFB">Fly further this spring</text></svg>`;

// The advertiser's CDN and landing page, on loopback.
let cdn: ReturnType<typeof Bun.serve> | undefined;
let browser: Browser | undefined;
beforeAll(async () => {
  cdn = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) =>
      new URL(req.url).pathname === '/hero.svg'
        ? new Response(BANNER_SVG, { headers: { 'content-type': 'image/svg+xml' } })
        : new Response('<!doctype html><title>Acme landing</title><h1>Welcome to Acme</h1>', { headers: { 'content-type': 'text/html' } }),
  });
  if (hasChromium) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
});
afterAll(async () => {
  await browser?.close();
  cdn?.stop(true);
});

async function start(adapter: Parameters<typeof startServer>[0], schema: string): Promise<TestServer> {
  const port = freePort();
  return startServer(
    adapter,
    schema,
    [
      auth({ testTokens: [{ token: TOKEN, name: 'Acme' }] }),
      tasks({ worker: false }),
      idempotency(),
      inventoryDb(),
      creative({ agentUrl: AGENT_URL, pruneIntervalMs: 0 }),
      salesAccounts({ sandbox: true }),
      salesCreatives({ sandbox: true }),
      restTasks(),
    ],
    { env: { PUBLIC_URL: `http://127.0.0.1:${port}`, PROTOCOL_NAMESPACE: 'adcp' }, port },
  );
}

const call = async (s: TestServer, task: string, json: Record<string, unknown>) => {
  const res = await s.fetch(`/tasks/${task}`, { method: 'POST', token: TOKEN, json });
  return { status: res.status, body: (await res.json()) as any };
};

forEachDatabase(
  'a served tag in Chromium',
  (adapter, schema) => start(adapter, schema),
  (s) => s.close(),
  (get, adapter) => {
    if (!hasChromium) {
      test.skip(`Chromium check skipped: ${CHROMIUM} is missing`, () => {});
      return;
    }
    test('the banner shows at its size, the link goes through the click tracker to the landing page, both hits are counted', async () => {
      const s = get();
      const hero = {
        creative_id: 'hero_300x250',
        name: 'Acme Rockets <spring>',
        format_id: fid('display_300x250_image'),
        assets: {
          banner_image: { asset_type: 'image', url: `http://127.0.0.1:${cdn!.port}/hero.svg`, width: 300, height: 250 },
          click_url: { asset_type: 'url', url_type: 'clickthrough', url: `http://127.0.0.1:${cdn!.port}/landing` },
        },
      };
      const synced = await call(s, 'sync_creatives', { idempotency_key: `served-tag-sync-${adapter}-0001`, account: ACCOUNT, creatives: [hero] });
      expect(synced.status).toBe(200);
      const built = await call(s, 'build_creative', {
        idempotency_key: `served-tag-build-${adapter}-0001`,
        creative_id: 'hero_300x250',
        account: ACCOUNT,
        target_format_id: fid('display_300x250_image'),
        media_buy_id: 'mb_served',
        package_id: 'pkg_served',
      });
      expect(built.status).toBe(200);
      expect(bothVersionsErrors('media-buy/build-creative-response.json', built.body)).toEqual([]);
      const assets = built.body.creative_manifest.assets;
      expect(assets.serving_tag.asset_type).toBe('html');
      const impression = assets.impression_tracker.url as string;
      const click = assets.click_tracker.url as string;

      const page = await browser!.newPage({ viewport: { width: 340, height: 290 } });
      const pixel = page.waitForResponse((r) => r.url() === impression);
      await page.setContent(`<!doctype html><html><body style="margin:20px;background:#fafafa">${assets.serving_tag.content}</body></html>`);
      // The pixel answered the browser (a GIF from the agent's tracker route).
      const hit = await pixel;
      expect([hit.status(), hit.headers()['content-type']]).toEqual([200, 'image/gif']);

      const banner = page.locator('a > img');
      await banner.evaluate((el: HTMLImageElement) => el.decode());
      expect(await banner.evaluate((el: HTMLImageElement) => [el.naturalWidth, el.naturalHeight])).toEqual([300, 250]);
      expect(await banner.getAttribute('alt')).toBe('Acme Rockets <spring>');
      const box = (await banner.boundingBox())!;
      expect([box.x, box.y, box.width, box.height]).toEqual([20, 20, 300, 250]);
      expect(await page.locator('a').getAttribute('href')).toBe(click);
      // The pixel is in the page, out of sight.
      expect(await page.locator(`img[src="${impression}"]`).isVisible()).toBe(true);
      expect((await page.locator(`img[src="${impression}"]`).boundingBox())!.x).toBeLessThan(0);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, adapter === 'postgres' ? 'served-tag.png' : `served-tag-${adapter}.png`) });

      // A viewer's click opens the landing page through the click tracker.
      const [landing] = await Promise.all([page.waitForEvent('popup'), banner.click()]);
      await landing.waitForLoadState();
      expect(landing.url()).toBe(`http://127.0.0.1:${cdn!.port}/landing`);
      expect(await landing.locator('h1').textContent()).toBe('Welcome to Acme');
      await landing.close();
      await page.close();

      const delivery = await call(s, 'get_creative_delivery', { account: ACCOUNT, media_buy_ids: ['mb_served'] });
      expect(delivery.status).toBe(200);
      expect(bothVersionsErrors('creative/get-creative-delivery-response.json', delivery.body)).toEqual([]);
      const row = delivery.body.creatives.find((c: any) => c.creative_id === 'hero_300x250');
      expect(row.totals).toMatchObject({ impressions: 1, clicks: 1 });
    }, 60_000);
  },
);
