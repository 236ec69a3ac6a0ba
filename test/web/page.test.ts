import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import auth from '../../plugins/auth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import restHost from '../../hosts/rest/index.ts';
import web from '../../hosts/web/index.ts';
import { dropSchema, uniqueSchema } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dir, '../artifacts');
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

if (!existsSync(CHROMIUM)) {
  describe('web page in headless Chromium', () => {
    test.skip(`skipped: ${CHROMIUM} is absent (apt-get install chromium)`, () => {});
  });
} else {
  describe('web page in headless Chromium', () => {
    const schema = uniqueSchema('web-page');
    let s: TestServer;
    let browser: Browser;
    let page: Page;
    let key: string;
    const consoleErrors: string[] = [];

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      s = await startServer('pglite', schema, [
        auth(),
        rateLimit({ pruneIntervalMs: 0 }),
        registryBrands(),
        registryProperties(),
        searchPostgres(),
        registryAgents(),
        registryFeed({ sequenceIntervalMs: 0 }),
        restHost(),
        web({ title: 'Test Registry' }),
      ]);
      ({ key } = await newKey(s.deployment, 'member', 'Dana Editor'));
      const post = (path: string, json: unknown) => s.fetch(path, { method: 'POST', token: key, json });
      await post('/api/registry/agents', {
        url: 'https://seeded-sales.example/mcp',
        name: 'Seeded Sales Agent',
        type: 'sales',
        description: 'A seeded agent <script>alert(1)</script>',
      });
      await post('/api/registry/agents', { url: 'https://other-creative.example/mcp', name: 'Other Creative', type: 'creative' });
      await post('/api/brands/save', {
        domain: 'history-brand.example',
        brand_name: 'History Brand',
        brand_manifest: { colors: [{ hex: '#2f5bd3', type: 'primary' }], description: 'First description' },
      });
      await post('/api/brands/save', { domain: 'history-brand.example', brand_name: 'History Brand Renamed', edit_summary: 'Renamed the brand' });
      await post('/api/brands/history-brand.example/rollback', { to_revision: 1, edit_summary: 'Back to the first name' });
      await post('/api/properties/save', {
        publisher_domain: 'hosted-news.example',
        authorized_agents: [{ url: 'https://seeded-sales.example/mcp', authorized_for: 'display' }],
        properties: [{ type: 'website', name: 'Hosted News', identifiers: [{ type: 'domain', value: 'hosted-news.example' }] }],
      });
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
      page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
      page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
      page.on('pageerror', (e) => consoleErrors.push(e.message));
      page.on('response', (r) => r.status() >= 400 && consoleErrors.push(`${r.status()} ${r.url()}`));
    });
    afterAll(async () => {
      await browser?.close();
      await s?.close();
      await dropSchema('pglite', schema);
    });

    test('the page loads with the registry statistics', async () => {
      const res = await page.goto(`${s.base}/`);
      expect(res?.status()).toBe(200);
      expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
      await page.getByRole('heading', { name: 'Registry' }).waitFor();
      expect(await page.textContent('main')).toContain('2 in the catalog');
      await page.screenshot({ path: join(ARTIFACTS, 'web-home.png'), fullPage: true });
    });

    test('search finds a seeded agent, and its page shows it as text', async () => {
      await page.fill('#q', 'seeded');
      await page.press('#q', 'Enter');
      await page.getByRole('heading', { name: 'Results for “seeded”' }).waitFor();
      const result = page.getByRole('link', { name: 'Seeded Sales Agent' });
      await result.waitFor();
      expect(await page.getByRole('link', { name: 'Other Creative' }).count()).toBe(0);
      await page.screenshot({ path: join(ARTIFACTS, 'web-search.png'), fullPage: true });
      await result.click();
      await page.getByRole('heading', { name: 'Seeded Sales Agent' }).waitFor();
      const text = await page.textContent('main');
      expect(text).toContain('A seeded agent <script>alert(1)</script>');
      expect(await page.locator('main script').count()).toBe(0);
      expect(text).toContain('Publishers authorizing it');
    });

    test("an entry's history shows its revisions, newest first", async () => {
      await page.goto(`${s.base}/#/brand/history-brand.example`);
      await page.getByRole('heading', { name: 'History Brand', exact: true }).waitFor();
      const revisions = page.locator('.revision');
      await revisions.first().waitFor();
      expect(await revisions.evaluateAll((els) => els.map((e) => e.getAttribute('data-revision')))).toEqual(['3', '2', '1']);
      const text = await page.textContent('main');
      expect(text).toContain('Revision history (3)');
      expect(text).toContain('Renamed the brand');
      expect(text).toContain('rollback to 1');
      expect(text).toContain('Dana Editor');
      expect(text).toContain('First description');
      await page.screenshot({ path: join(ARTIFACTS, 'web-history.png'), fullPage: true });
    });

    test('browse agents, publishers and the API reference; the live feed with a key', async () => {
      await page.goto(`${s.base}/#/agents`);
      await page.getByRole('link', { name: 'Other Creative' }).waitFor();
      await page.goto(`${s.base}/#/publishers`);
      await page.getByRole('link', { name: 'hosted-news.example' }).waitFor();
      await page.goto(`${s.base}/#/api`);
      await page.getByText('/api/brands/resolve', { exact: true }).waitFor();
      await page.goto(`${s.base}/#/feed`);
      await page.fill('input[type=password]', key);
      await page.getByRole('button', { name: 'Follow' }).click();
      await page.locator('li[data-event="brand.created"]').first().waitFor();
      await page.screenshot({ path: join(ARTIFACTS, 'web-feed.png'), fullPage: true });
      expect(consoleErrors).toEqual([]);
    });

    test('usable on a phone: no horizontal scrolling, search and history readable', async () => {
      const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
      await phone.goto(`${s.base}/#/brand/history-brand.example`);
      await phone.locator('.revision').first().waitFor();
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      expect(await phone.isVisible('#q')).toBe(true);
      await phone.screenshot({ path: join(ARTIFACTS, 'web-phone.png'), fullPage: true });
      await phone.close();
    });
  });
}
