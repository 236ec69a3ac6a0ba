import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import creative from '../../plugins/creative/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import { loadLinkKey, PreviewLinks, type PreviewLink } from '../../plugins/creative/preview-links.ts';
import { PREVIEW_CSP } from '../../plugins/creative/render.ts';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { freePort, startServer, type TestServer } from '../support/server.ts';
import { ACME, AGENT_URL, fid, nativeManifest, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';

interface Env {
  a: CreativeServer;
  /** A second instance on the same database, storing every preview as a row (links off). */
  b: TestServer;
  clock: ManualClock;
}

const STORED_ID = /\/previews\/([A-Za-z0-9_-]{24}\.[0-9a-z]+)$/;
const LINK_ID = /\/previews\/([0-9a-z]{1,10}\.[A-Za-z0-9_-]{40,})$/;

forEachDatabase<Env>(
  'creative stateless preview links',
  async (adapter, schema) => {
    const clock = new ManualClock(new Date('2031-05-01T12:00:00Z'));
    const a = await startCreativeServer(adapter, schema, { overrides: [[Clock, clock]], creative: { previewTtlSeconds: 3600 } });
    const port = freePort();
    const b = await startServer(
      adapter,
      schema,
      [
        auth({ testTokens: [{ token: TOKEN }] }),
        tasks({ worker: false }),
        idempotency(),
        creative({ agentUrl: AGENT_URL, pruneIntervalMs: 0, previewTtlSeconds: 3600, previewLinks: false }),
        restTasks(),
      ],
      { env: { PUBLIC_URL: `http://127.0.0.1:${port}` }, overrides: [[Clock, clock]], port },
    );
    return { a, b, clock };
  },
  async ({ a, b }) => {
    await b.close();
    await a.server.close();
  },
  (get) => {
    const db = () => get().a.server.deployment.get(Database);
    const rows = async () => (await db().query<{ n: number }>(sql`SELECT count(*)::int AS n FROM creative_previews`))[0]!.n;
    const bases = () => [get().a.server.base, get().b.base];
    const page = async (base: string, id: string) => {
      const res = await fetch(`${base}/previews/${id}`);
      return { status: res.status, csp: res.headers.get('content-security-policy'), cache: res.headers.get('cache-control'), html: await res.text() };
    };
    const request = {
      request_type: 'batch',
      requests: [
        {
          creative_manifest: {
            ...nativeManifest({ title: { asset_type: 'text', content: 'Skates for {CITY}' } }),
            brand: { brand_kit_override: { colors: ACME.colors } },
          },
          inputs: [{ name: 'Paris', macros: { CITY: 'Paris' } }, { name: 'Default' }],
        },
        {
          creative_manifest: {
            format_id: fid('display_300x250_html'),
            assets: { html_creative: { asset_type: 'html', content: '<div>Banner & "quotes"</div>' } },
          },
        },
      ],
    };
    const ids = (body: any): string[] => body.results.flatMap((r: any) => r.response.previews.map((p: any) => p.preview_url as string));

    test("a stateless preview renders the same page as a stored one; each instance serves the other's ids", async () => {
      const before = await rows();
      const linked = ids((await restClient(get().a.server, TOKEN).call('preview_creative', request)).body);
      expect(await rows()).toBe(before);
      const stored = ids((await restClient(get().b, TOKEN).call('preview_creative', request)).body);
      expect(await rows()).toBe(before + 3);
      expect(linked).toHaveLength(3);
      for (const [n, url] of linked.entries()) {
        const link = LINK_ID.exec(url)![1]!;
        const row = STORED_ID.exec(stored[n]!)![1]!;
        expect(url.length).toBeLessThan(2000);
        const pages = await Promise.all(bases().flatMap((base) => [page(base, link), page(base, row)]));
        for (const p of pages) expect(p).toEqual({ status: 200, csp: PREVIEW_CSP, cache: 'private, max-age=3600', html: pages[0]!.html });
      }
      const paris = await page(get().b.base, LINK_ID.exec(linked[0]!)![1]!);
      expect(paris.html).toContain('Skates for Paris</h2>');
      expect(paris.html).toContain('data-brand-color="#C8102E"');
    });

    test('an altered id is 404 (body, expiry or length); an expired one 410 on every instance', async () => {
      const { body } = await restClient(get().a.server, TOKEN).call('preview_creative', { request_type: 'single', creative_manifest: nativeManifest() });
      const id = LINK_ID.exec(body.previews[0].preview_url)![1]!;
      const [exp, sealed] = id.split('.') as [string, string];
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      const altered = [
        `${exp}.${flip(sealed, 20)}`,
        `${exp}.${flip(sealed, sealed.length - 1)}`,
        `${(Number.parseInt(exp, 36) + 86_400).toString(36)}.${sealed}`,
        `${exp}.${sealed.slice(0, -4)}`,
        `${exp}.${'A'.repeat(60)}`,
      ];
      for (const base of bases()) {
        expect((await page(base, id)).status).toBe(200);
        for (const bad of altered) expect({ bad, status: (await page(base, bad)).status }).toEqual({ bad, status: 404 });
      }
      get().clock.advance(3600_000);
      for (const base of bases()) expect((await page(base, id)).status).toBe(410);
      get().clock.advance(-3600_000);
    });

    test('a manifest too large for a link is a stored row', async () => {
      const before = await rows();
      const long = { asset_type: 'text', content: Buffer.from(crypto.getRandomValues(new Uint8Array(2400))).toString('base64') };
      const { body } = await restClient(get().a.server, TOKEN).call('preview_creative', {
        request_type: 'batch',
        requests: [
          { creative_manifest: nativeManifest({ description: long }) },
          { creative_manifest: nativeManifest() },
          // Too long as plain JSON, short once deflated.
          { creative_manifest: nativeManifest({ description: { asset_type: 'text', content: 'Faster than the road runner. '.repeat(100) } }) },
        ],
      });
      const [big, small, deflated] = ids(body);
      expect(big).toMatch(STORED_ID);
      expect(small).toMatch(LINK_ID);
      expect(deflated).toMatch(LINK_ID);
      expect(deflated!.length).toBeLessThan(2000);
      expect(await rows()).toBe(before + 1);
      for (const base of bases()) {
        expect((await page(base, STORED_ID.exec(big!)![1]!)).html).toContain(long.content);
        expect((await page(base, LINK_ID.exec(deflated!)![1]!)).html).toContain('Faster than the road runner. '.repeat(100).trim());
      }
    });

    test('instances making the key at once all get the one kept', async () => {
      await db().query(sql`DELETE FROM creative_keys`);
      const box = get().a.server.deployment.get(SecretBox);
      const keys = await Promise.all(Array.from({ length: 4 }, () => loadLinkKey(db(), box, get().clock)));
      expect(keys[0]).toHaveLength(32);
      for (const key of keys) expect(key.equals(keys[0]!)).toBe(true);
    });
  },
);

test('a sealed link opens only as sealed: any changed character, another key or a longer expiry fails', () => {
  const key = Buffer.from(crypto.getRandomValues(new Uint8Array(32)));
  const link: PreviewLink = {
    format: 'native_standard',
    assets: { title: { asset_type: 'text', content: 'Skates ✓ "quoted"' } },
    variant: 'Default',
    width: 300,
    height: 250,
  };
  const expires = new Date('2031-05-01T13:00:00Z');
  for (const text of ['x', 'x'.repeat(10), 'Faster. '.repeat(300)]) {
    const want = { ...link, assets: { title: { asset_type: 'text', content: text } } };
    const id = PreviewLinks.seal(key, want, expires, 1900)!;
    expect(id.length).toBeLessThanOrEqual(1900);
    const [exp, sealed] = id.split('.') as [string, string];
    expect(exp).toBe((Date.parse('2031-05-01T13:00:00Z') / 1000).toString(36));
    expect(PreviewLinks.open(key, exp, sealed)).toEqual(want);
    expect(PreviewLinks.open(Buffer.from(crypto.getRandomValues(new Uint8Array(32))), exp, sealed)).toBeNull();
    expect(PreviewLinks.open(key, (Number.parseInt(exp, 36) + 1).toString(36), sealed)).toBeNull();
    for (let i = 0; i < sealed.length; i++) {
      for (const c of ['A', 'B', '_']) {
        const changed = sealed.slice(0, i) + c + sealed.slice(i + 1);
        if (changed !== sealed) expect(PreviewLinks.open(key, exp, changed)).toBeNull();
      }
    }
  }
  // Incompressible and too long: no link (the preview is stored).
  const noise = Buffer.from(crypto.getRandomValues(new Uint8Array(2000))).toString('base64');
  expect(PreviewLinks.seal(key, { ...link, assets: { t: { asset_type: 'text', content: noise } } }, expires, 1900)).toBeUndefined();
});
