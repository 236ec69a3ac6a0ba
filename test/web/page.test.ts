import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import auth from '../../plugins/auth/index.ts';
import oauth from '../../plugins/oauth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import restHost from '../../hosts/rest/index.ts';
import web from '../../hosts/web/index.ts';
import { Database } from '../../core/ports/database.ts';
import { sql } from '../../core/sql.ts';
import { adapterNames, dropSchema, uniqueSchema } from '../support/db.ts';
import type { TestServer } from '../support/server.ts';
import { startAt } from '../oauth/support.ts';
import { defaultIds } from '../../core/ports/ids.ts';
import { createApiKey, createOrganization, createUser } from '../../plugins/auth/store.ts';
import { setPassword } from '../../plugins/oauth/index.ts';

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
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

if (!existsSync(CHROMIUM)) {
  describe('web page in headless Chromium', () => {
    test.skip(`skipped: ${CHROMIUM} is absent (apt-get install chromium)`, () => {});
  });
} else {
  for (const adapter of adapterNames()) {
    describe(`web page in headless Chromium [${adapter}]`, () => {
      const schema = uniqueSchema('web-page');
      // Screenshots from the first adapter only (the pages are the same on both).
      const shot = (page: Page, name: string) =>
        adapter === adapterNames()[0] ? page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true }) : Promise.resolve();
      let s: TestServer;
      let browser: Browser;
      let page: Page;
      let user: { login: string; password: string };
      const consoleErrors: string[] = [];
      const consoleText: string[] = [];

      beforeAll(async () => {
        mkdirSync(ARTIFACTS, { recursive: true });
        s = await startAt(adapter, schema, [
          auth(),
          rateLimit({ pruneIntervalMs: 0 }),
          oauth(),
          registryBrands(),
          registryProperties(),
          searchPostgres(),
          registryAgents(),
          registryFeed({ sequenceIntervalMs: 0 }),
          restHost(),
          web({ title: 'Test Registry' }),
        ]);
        // One member organization: Dana has an API key (the seeding below) and a login (the page's sign-in), so she may restore its revisions.
        const db = s.deployment.get(Database);
        const org = await createOrganization(db, defaultIds, { name: `web-org-${adapter}`, tier: 'member' });
        const dana = await createUser(db, defaultIds, { orgId: org.id, name: 'Dana Editor' });
        const { key } = await createApiKey(db, defaultIds, { orgId: org.id, name: 'seed', userId: dana.id });
        user = { login: 'dana@example.com', password: 'correct horse battery staple' };
        await setPassword(db, { userId: dana.id, ...user, now: new Date() });
        const post = async (path: string, json: unknown) => {
          const res = await s.fetch(path, { method: 'POST', token: key, json });
          expect(res.status).toBeLessThan(300);
        };
        await post('/api/registry/agents', {
          url: 'https://seeded-sales.example/mcp',
          name: 'Seeded Sales Agent',
          type: 'sales',
          description: 'A seeded agent <script>alert(1)</script>',
        });
        await post('/api/registry/agents', { url: 'https://other-creative.example/mcp', name: 'Other Creative', type: 'creative' });
        await post('/api/registry/agents', { url: 'https://quiet-signals.example/mcp', name: 'Quiet Signals', type: 'signals' });
        // Probe results (the probes themselves are tested in test/registry/agent-health.test.ts; this deployment has no crawler to run them).
        const probed = async (url: string, status: string, compliance: string, verified: boolean, issues: unknown[] = []) =>
          db.query(sql`
            INSERT INTO registry_agent_health (agent_id, next_check_at, last_checked_at, status, latency_ms, compliance, compliance_issues, compliance_changed_at, verified, verified_since)
            SELECT id, now() + interval '1 hour', now(), ${status}::text, 120, ${compliance}::text, ${issues}::jsonb, now(), ${verified}::boolean,
                   CASE WHEN ${verified}::boolean THEN now() END
            FROM registry_agents WHERE url = ${url}::text
            ON CONFLICT (agent_id) DO UPDATE SET last_checked_at = excluded.last_checked_at, status = excluded.status, latency_ms = excluded.latency_ms,
              compliance = excluded.compliance, compliance_issues = excluded.compliance_issues, verified = excluded.verified, verified_since = excluded.verified_since`);
        await probed('https://seeded-sales.example/mcp', 'healthy', 'compliant', true);
        await probed('https://other-creative.example/mcp', 'unreachable', 'non_compliant', false, [{ path: '/supported_protocols', message: 'is required' }]);
        await post('/api/brands/save', {
          domain: 'history-brand.example',
          brand_name: 'History Brand',
          brand_manifest: { colors: [{ hex: '#2f5bd3', type: 'primary' }], description: 'First description' },
        });
        await post('/api/brands/save', {
          domain: 'history-brand.example',
          brand_name: 'History Brand Renamed',
          brand_manifest: { colors: [{ hex: '#1b5e20', type: 'primary' }], tagline: 'New tagline' },
          edit_summary: 'Renamed the brand',
        });
        await post('/api/brands/history-brand.example/rollback', { to_revision: 1, edit_summary: 'Back to the first name' });
        await post('/api/properties/save', {
          publisher_domain: 'hosted-news.example',
          authorized_agents: [{ url: 'https://seeded-sales.example/mcp', authorized_for: 'display' }],
          properties: [{ type: 'website', name: 'Hosted News', identifiers: [{ type: 'domain', value: 'hosted-news.example' }] }],
        });
        browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
        page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
        page.on('console', (m) => {
          consoleText.push(m.text());
          if (m.type() === 'error') consoleErrors.push(m.text());
        });
        page.on('pageerror', (e) => consoleErrors.push(e.message));
        page.on('response', (r) => r.status() >= 400 && consoleErrors.push(`${r.status()} ${r.url()}`));
      });
      afterAll(async () => {
        await browser?.close();
        await s?.close();
        await dropSchema(adapter, schema);
      });

      test('the home page shows counts, and asks a visitor to sign in for recent changes', async () => {
        const res = await page.goto(`${s.base}/`);
        expect(res?.status()).toBe(200);
        expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
        await page.getByRole('heading', { name: 'Registry' }).waitFor();
        const count = (stat: string) => page.locator(`[data-stat="${stat}"] strong`).textContent();
        expect(await count('agents')).toBe('3');
        expect(await count('brands')).toBe('1');
        expect(await count('publishers')).toBe('1');
        expect(await count('properties')).toBe('1');
        expect(await page.textContent('#recent-signin')).toContain('Sign in to see the latest changes');
        expect(await page.locator('#recent').count()).toBe(0);
      });

      test('search finds a seeded agent, and its page shows it as text', async () => {
        await page.goto(`${s.base}/`);
        await page.fill('#q', 'seeded');
        await page.press('#q', 'Enter');
        await page.getByRole('heading', { name: 'Results for “seeded”' }).waitFor();
        const result = page.getByRole('link', { name: 'Seeded Sales Agent' });
        await result.waitFor();
        expect(await page.getByRole('link', { name: 'Other Creative' }).count()).toBe(0);
        await shot(page, 'web-search');
        await result.click();
        await page.getByRole('heading', { name: 'Seeded Sales Agent' }).waitFor();
        const text = await page.textContent('main');
        expect(text).toContain('A seeded agent <script>alert(1)</script>');
        expect(await page.locator('main script').count()).toBe(0);
        expect(text).toContain('Publishers authorizing it');
        expect(await page.locator('main [data-badge=verified]').textContent()).toBe('✓ verified');
      });

      // Under load the home page's reads could answer after a search the reader had started meanwhile,
      // and its late render replaced the results (the search test then saw its heading but no agent).
      test('a page the reader has left does not replace the one they went to when its reads answer late', async () => {
        let release!: () => void;
        const held = new Promise<void>((r) => {
          release = r;
        });
        await page.route('**/api/registry/stats', async (route) => {
          await held;
          await route.continue();
        });
        try {
          await page.goto(`${s.base}/#/`);
          await page.fill('#q', 'seeded');
          await page.press('#q', 'Enter');
          await page.getByRole('link', { name: 'Seeded Sales Agent' }).waitFor();
          const late = page.waitForResponse('**/api/registry/stats');
          release();
          await late;
          // The home page's other reads had answered; its render now waits for nothing but a turn of the page's loop.
          await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
          expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Results for “seeded”');
          expect(await page.getByRole('link', { name: 'Seeded Sales Agent' }).count()).toBe(1);
        } finally {
          await page.unroute('**/api/registry/stats');
        }
      });

      test('agents carry health, compliance and verified badges, and filter by type', async () => {
        await page.goto(`${s.base}/#/agents`);
        await page.getByRole('link', { name: 'Quiet Signals' }).waitFor();
        const row = (name: string) => page.locator('main li', { has: page.getByRole('link', { name, exact: true }) });
        const badges = (name: string) => row(name).locator('[data-badge]').allTextContents();
        expect(await badges('Seeded Sales Agent')).toEqual(['healthy', 'compliant', '✓ verified']);
        expect(await badges('Other Creative')).toEqual(['unreachable', 'non-compliant']);
        expect(await badges('Quiet Signals')).toEqual(['health unknown', 'compliance unknown']);
        expect(await row('Other Creative').locator('[data-badge=compliance]').getAttribute('title')).toBe('is required');
        const colour = (name: string, kind: string) =>
          row(name)
            .locator(`[data-badge=${kind}]`)
            .evaluate((el) => getComputedStyle(el).color);
        expect(await colour('Seeded Sales Agent', 'health')).toBe('rgb(26, 127, 55)');
        expect(await colour('Other Creative', 'health')).toBe('rgb(180, 35, 24)');
        await shot(page, 'web-agents');
        await page.locator('.filter').getByRole('link', { name: 'creative', exact: true }).click();
        await page.getByRole('heading', { name: 'Agents: creative' }).waitFor();
        expect(page.url()).toEndWith('#/agents/creative');
        expect(await page.locator('main .list li').count()).toBe(1);
        await page.getByRole('link', { name: 'Other Creative' }).waitFor();
        await page.locator('.filter').getByRole('link', { name: 'governance', exact: true }).click();
        await page.getByText('No governance agent is in the catalog.').waitFor();
        await page.locator('.filter').getByRole('link', { name: 'all', exact: true }).click();
        await page.getByRole('link', { name: 'Seeded Sales Agent' }).waitFor();
      });

      test("an entry's history shows its revisions and what each changed, field by field", async () => {
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
        // Anonymous: changes to read, no restore buttons.
        expect(await page.getByRole('button', { name: /Restore/ }).count()).toBe(0);
        const second = page.locator('.revision[data-revision="2"]');
        await second.getByRole('button', { name: 'Show changes' }).click();
        const table = second.locator('table.diff');
        await table.waitFor();
        const rows = await table
          .locator('tbody tr')
          .evaluateAll((trs) =>
            trs.map((tr) => [
              tr.getAttribute('data-path'),
              tr.className.replace('change ', ''),
              ...[...tr.querySelectorAll('td')].slice(1).map((td) => td.textContent),
            ]),
          );
        expect(rows).toEqual([
          ['brand_name', 'changed', 'History Brand', 'History Brand Renamed'],
          ['brand_manifest.colors[0].hex', 'changed', '#2f5bd3', '#1b5e20'],
          ['brand_manifest.tagline', 'added', '—', 'New tagline'],
          ['brand_manifest.description', 'removed', 'First description', '—'],
        ]);
        expect(
          await table
            .locator('del')
            .first()
            .evaluate((el) => getComputedStyle(el).backgroundColor),
        ).toBe('rgb(253, 231, 228)');
        expect(
          await table
            .locator('ins')
            .first()
            .evaluate((el) => getComputedStyle(el).backgroundColor),
        ).toBe('rgb(221, 244, 226)');
        // The first revision is compared with nothing: every field added.
        await page.locator('.revision[data-revision="1"]').getByRole('button', { name: 'Show changes' }).click();
        await page.locator('.revision[data-revision="1"] tr.added').first().waitFor();
        expect(await page.locator('.revision[data-revision="1"] tr:not(.added)').count()).toBe(1); // the header row
        await shot(page, 'web-history');
        await second.getByRole('button', { name: 'Hide changes' }).click();
        expect(await second.locator('table.diff').count()).toBe(0);
      });

      test('sign-in from the page (code + PKCE): the feed in words with links, a member action, sign-out', async () => {
        await page.goto(`${s.base}/#/feed`);
        await page.getByRole('button', { name: 'Sign in to follow the feed' }).click();
        // The registry's own sign-in page.
        await page.waitForURL((u) => u.pathname === '/authorize');
        expect(new URL(page.url()).searchParams.get('code_challenge_method')).toBe('S256');
        expect(new URL(page.url()).searchParams.get('resource')).toBe(`${s.base}/api`);
        await page.fill('#login', user.login);
        await page.fill('#password', user.password);
        await page.getByRole('button', { name: 'Sign in and allow' }).click();
        await page.waitForURL((u) => u.pathname === '/' && u.hash === '#/feed');
        expect(page.url()).not.toContain('code=');
        await page.getByRole('button', { name: 'Sign out' }).waitFor();
        const brandEvent = page.locator('li[data-event="brand.updated"]').first();
        await brandEvent.waitFor();
        const feedText = (await page.textContent('#events'))!;
        expect(feedText).not.toMatch(UUID);
        expect(feedText).toContain('Seeded Sales Agent');
        expect(feedText).toContain('hosted-news.example');
        expect(feedText).toContain('a member');
        expect(await page.locator('li[data-event="agent.profile_updated"]').count()).toBe(3);
        const stored = await page.evaluate(() => ({ session: sessionStorage.getItem('registry-session'), local: localStorage.length }));
        const token = JSON.parse(stored.session!).access_token as string;
        expect(token.split('.')).toHaveLength(3);
        expect(stored.local).toBe(0);
        await shot(page, 'web-feed');
        // Signed in, the home page lists the recent changes, newest first: the hosted publisher's property, then the brand's rollback.
        await page.goto(`${s.base}/#/`);
        const recent = page.locator('#recent li');
        await recent.first().waitFor();
        expect(await recent.first().getAttribute('data-event')).toBe('property.created');
        const text = (await page.textContent('#recent'))!;
        expect(text).not.toMatch(UUID);
        expect(text).toContain('History Brand');
        expect(text).toContain('revision 3');
        expect(text).toContain('Seeded Sales Agent');
        await shot(page, 'web-home');
        await page.locator('#recent').getByRole('link', { name: 'History Brand' }).first().click();
        await page.getByRole('heading', { name: 'History Brand', exact: true }).waitFor();
        await page.goto(`${s.base}/#/feed`);
        await brandEvent.waitFor();
        // A member action with the token: restore revision 2 from the history.
        await brandEvent.getByRole('link', { name: 'History Brand' }).click();
        await page.getByRole('heading', { name: 'History Brand', exact: true }).waitFor();
        await page.getByRole('button', { name: 'Restore revision 2' }).click();
        await page.getByRole('heading', { name: 'History Brand Renamed', exact: true }).waitFor();
        expect(await page.locator('.revision').first().getAttribute('data-revision')).toBe('4');
        expect(await page.locator('.revision').first().textContent()).toContain('rollback to 2');
        expect(await page.locator('.revision').first().textContent()).toContain('Dana Editor');
        // An access token the API no longer takes (as when it expires): the page refreshes it once (rotating the refresh token) and carries on.
        const before = await page.evaluate(() => sessionStorage.getItem('registry-session'));
        await page.evaluate(() => {
          const session = JSON.parse(sessionStorage.getItem('registry-session')!);
          sessionStorage.setItem('registry-session', JSON.stringify({ ...session, access_token: 'no-longer-valid' }));
        });
        const seen = consoleErrors.length;
        await page.goto(`${s.base}/#/feed`);
        await page.locator('li[data-event="brand.updated"]').first().waitFor();
        const renewed = JSON.parse((await page.evaluate(() => sessionStorage.getItem('registry-session')))!);
        expect(renewed.access_token.split('.')).toHaveLength(3);
        expect(renewed.refresh_token).not.toBe(JSON.parse(before!).refresh_token);
        // Only the one refused request (and Chromium's console line about it).
        expect(consoleErrors.splice(seen).filter((e) => !e.includes('401'))).toEqual([]);
        // Signed out: the token is gone (and revoked), the feed asks to sign in again.
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
        expect(await page.evaluate(() => sessionStorage.getItem('registry-session'))).toBeNull();
        expect((await s.fetch('/api/registry/feed', { token: renewed.access_token })).status).toBe(401);
        expect(consoleText.filter((t) => t.includes(token) || t.includes(renewed.access_token))).toEqual([]);
        expect(consoleErrors).toEqual([]);
      });

      test('browse publishers and the API reference', async () => {
        await page.goto(`${s.base}/#/publishers`);
        await page.getByRole('link', { name: 'hosted-news.example' }).waitFor();
        await page.goto(`${s.base}/#/api`);
        await page.getByText('/api/brands/resolve', { exact: true }).waitFor();
        await page.getByText('/api/brands/diff', { exact: true }).waitFor();
      });

      test('on a phone (390 px): every nav link in view, no horizontal scrolling, badges and diffs readable', async () => {
        const phone = await browser.newPage(PHONE);
        const inView = async () => {
          const boxes = await phone
            .locator('header nav a, #account button')
            .evaluateAll((els) => els.map((e) => [e.textContent, e.getBoundingClientRect().right]));
          return boxes.filter(([, right]) => (right as number) > 390).map(([name]) => name);
        };
        const overflow = () => phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        await phone.goto(`${s.base}/`);
        await phone.locator('[data-stat=agents]').waitFor();
        expect(await phone.locator('header nav a').allTextContents()).toEqual(['Brands', 'Publishers', 'Properties', 'Agents', 'Feed', 'API']);
        expect(await inView()).toEqual([]);
        for (const a of await phone.locator('header nav a').all()) expect(await a.isVisible()).toBe(true);
        expect(await overflow()).toBeLessThanOrEqual(0);
        await shot(phone, 'web-phone-home');
        await phone.getByRole('link', { name: 'API', exact: true }).click();
        await phone.getByText('/api/brands/resolve', { exact: true }).waitFor();
        await phone.goto(`${s.base}/#/agents`);
        await phone.locator('[data-badge=verified]').waitFor();
        expect(await overflow()).toBeLessThanOrEqual(0);
        await shot(phone, 'web-phone-agents');
        await phone.goto(`${s.base}/#/brand/history-brand.example`);
        await phone.locator('.revision[data-revision="3"]').getByRole('button', { name: 'Show changes' }).click();
        await phone.locator('.revision[data-revision="3"] table.diff').waitFor();
        expect(await overflow()).toBeLessThanOrEqual(0);
        expect(await phone.isVisible('#q')).toBe(true);
        await shot(phone, 'web-phone');
        await phone.close();
      });
    });
  }
}
