import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { Conversation, type ConversationPort, type SiProduct } from '../../core/ports/conversation.ts';
import { definePlugin } from '../../core/plugin.ts';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { identity, key, OTHER, siServer, TOKEN, valid, VOLTA } from './si-fixture.ts';

/**
 * `GET /si/preview/{session_id}`: the latest SI answer as a host sees it, in Chromium: the brand's text,
 * a product card with image, title, description, price and Buy button; product strings a model wrote are
 * shown as text, never run (screenshot test/artifacts/si-product-card.png). Only the session's host reads it.
 */
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dir, '../artifacts');
const hasChromium = existsSync(CHROMIUM);
const HOSTILE = `Volta <script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> "Edition"`;
const CAR_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="160" viewBox="0 0 160 160"><rect width="160" height="160" fill="#E3F2FD"/><rect x="20" y="70" width="120" height="36" rx="12" fill="#2E7D32"/><rect x="44" y="50" width="64" height="28" rx="10" fill="#43A047"/><circle cx="50" cy="110" r="14" fill="#263238"/><circle cx="112" cy="110" r="14" fill="#263238"/></svg>`;

let images: ReturnType<typeof Bun.serve> | undefined;
let browser: Browser | undefined;
beforeAll(async () => {
  images = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(CAR_SVG, { headers: { 'content-type': 'image/svg+xml' } }) });
  if (hasChromium) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
});
afterAll(async () => {
  await browser?.close();
  images?.stop(true);
});

// A model's answers: the opening one shows the Volta (its photo on loopback) and a product whose strings are hostile.
const conversation: ConversationPort = {
  name: 'scripted',
  async reply(turn) {
    const volta: SiProduct = { ...VOLTA, image_url: `http://127.0.0.1:${images!.port}/volta.svg` };
    if (turn.message) return { message: 'The Standard costs less.', products: [{ product_id: 'volta_std', name: 'Volta EV Standard', price: '$41,900' }] };
    const hostile: SiProduct = { product_id: 'volta_x', name: HOSTILE, description: '</p><b>bold?</b>', price: '$1 & up', image_url: 'javascript:alert(1)' };
    return { message: 'Here are two Voltas for your road trips.', products: [volta, hostile] };
  },
};
const plugged = definePlugin({ name: 'scripted-conversation', provides: [Conversation], init: (_d, k) => k.provide(Conversation, conversation) });

forEachDatabase(
  'SI preview of a session',
  (adapter, schema) => siServer(adapter, schema, [plugged()]),
  (s) => s.close(),
  (get, adapter) => {
    let session = '';
    test('the preview page is the latest answer, for the session host only', async () => {
      const s = get();
      const opened = await restClient(s, TOKEN).call('si_initiate_session', { idempotency_key: key(), intent: 'road trips with Nova', identity });
      valid('si-initiate-session-response.json', opened.body);
      session = opened.body.session_id as string;
      const page = await s.fetch(`/si/preview/${session}`, { token: TOKEN });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      const html = await page.text();
      expect(html).toContain('Here are two Voltas for your road trips.');
      expect(html).toContain('&lt;script&gt;window.__pwned = 1&lt;/script&gt;');
      expect(html).not.toContain('<script');
      expect(html).not.toContain('javascript:');
      expect(html).toContain('$1 &amp; up');

      // No credential, another host, or not a session: refused, and nothing of the session shown.
      const anonymous = await s.fetch(`/si/preview/${session}`);
      expect([anonymous.status, ((await anonymous.json()) as any).errors[0].code]).toEqual([401, 'AUTH_REQUIRED']);
      const other = await s.fetch(`/si/preview/${session}`, { token: OTHER });
      expect([other.status, ((await other.json()) as any).errors[0].code]).toEqual([404, 'SESSION_NOT_FOUND']);
      expect((await s.fetch('/si/preview/not-a-session', { token: TOKEN })).status).toBe(404);
    });

    if (!hasChromium) test.skip(`Chromium check skipped: ${CHROMIUM} is missing`, () => {});
    else
      test('in Chromium: the text, a card with photo, title, price and Buy; the hostile name is text (screenshot test/artifacts/si-product-card.png)', async () => {
        const s = get();
        const url = `${s.base}/si/preview/${session}`;
        const page = await browser!.newPage({ viewport: { width: 600, height: 420 } });
        const dialogs: string[] = [];
        page.on('dialog', (d) => {
          dialogs.push(d.message());
          void d.dismiss();
        });
        // The host's credential goes to the preview only, not to the image host.
        await page.route(url, (route) => route.continue({ headers: { ...route.request().headers(), authorization: `Bearer ${TOKEN}` } }));
        expect((await page.goto(url))!.status()).toBe(200);

        expect(await page.locator('[data-component="Text"]').textContent()).toBe('Here are two Voltas for your road trips.');
        const cards = page.locator('[data-component="ProductCard"]');
        expect(await cards.count()).toBe(2);
        const volta = cards.nth(0);
        expect(await volta.locator('[data-role="title"]').textContent()).toBe(VOLTA.name);
        expect(await volta.locator('[data-role="description"]').textContent()).toBe(VOLTA.description);
        expect(await volta.locator('[data-role="price"]').textContent()).toBe(VOLTA.price);
        const buy = volta.getByRole('button', { name: 'Buy' });
        expect(await buy.isVisible()).toBe(true);
        expect(await buy.getAttribute('data-product-id')).toBe(VOLTA.product_id);
        const photo = volta.locator('img');
        await photo.evaluate((el: HTMLImageElement) => el.decode());
        expect(await photo.evaluate((el: HTMLImageElement) => el.naturalWidth)).toBe(160);
        expect(await photo.getAttribute('alt')).toBe(VOLTA.name);

        // The hostile product: its name and description read as typed, no script ran, no image from javascript:.
        const hostile = cards.nth(1);
        expect(await hostile.locator('[data-role="title"]').textContent()).toBe(HOSTILE);
        expect(await hostile.locator('[data-role="description"]').textContent()).toBe('</p><b>bold?</b>');
        expect(await hostile.locator('[data-role="price"]').textContent()).toBe('$1 & up');
        expect(await hostile.locator('img').count()).toBe(0);
        expect(await page.locator('script, b').count()).toBe(0);
        expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
        expect(dialogs).toEqual([]);

        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: join(ARTIFACTS, adapter === 'postgres' ? 'si-product-card.png' : `si-product-card-${adapter}.png`), fullPage: true });
        await page.close();
      }, 60_000);

    test('after another turn the preview shows the new answer', async () => {
      const s = get();
      const sent = await restClient(s, TOKEN).call('si_send_message', { idempotency_key: key(), session_id: session, message: 'Anything cheaper?' });
      valid('si-send-message-response.json', sent.body);
      const html = await (await s.fetch(`/si/preview/${session}`, { token: TOKEN })).text();
      expect(html).toContain('The Standard costs less.');
      expect(html).toContain('Volta EV Standard');
      expect(html).toContain('$41,900');
      expect(html).not.toContain('Here are two Voltas');
    });
  },
);
