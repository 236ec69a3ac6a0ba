import { expect, test } from 'bun:test';
import { assemble } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { BrandLookup } from '../../core/ports/brand-lookup.ts';
import { CrawlerError } from '../../core/ports/crawler.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import restHost from '../../hosts/rest/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import crawlerHttp, { HttpCrawler } from '../../plugins/crawler-http/index.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import creative from '../../plugins/creative/index.ts';
import { createRegistryBrandLookup } from '../../plugins/creative/brand-registry-client.ts';
import { forEachDatabase, storagePlugin, uniqueSchema } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { newKey } from '../support/principals.ts';
import { fid, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import { Database } from '../../core/ports/database.ts';
import { BrandJsonRecords } from '../../core/ports/authoritative-records.ts';

// Both BrandLookup adapters: the brand registry of the same deployment (registry-brands) and the
// creative plugin's client of a registry at a configured URL (through the SSRF-guarded crawler).
const MANIFEST = {
  name: 'Meridian',
  colors: [
    { hex: '#0a7e3d', type: 'primary' },
    { hex: '#F4F4F4', type: 'secondary' },
  ],
  logos: [{ url: 'https://meridian-lookup.example/logo.png' }],
};
const MERIDIAN = {
  domain: 'meridian-lookup.example',
  name: 'Meridian Foods',
  colors: { primary: '#0A7E3D', secondary: '#F4F4F4' },
  logo_url: 'https://meridian-lookup.example/logo.png',
};

interface Parties {
  /** A registry and a creative agent in one deployment. */
  together: CreativeServer;
  /** A creative agent resolving brands at `together`'s registry URL. */
  remote: CreativeServer;
}

/** A build naming `domain`: answered at once by a local registry, as a task by a registry over HTTP. */
async function buildFor(s: CreativeServer, domain: string, key: string, answered: 'at once' | 'as a task') {
  const client = restClient(s.server, TOKEN);
  const { body } = await client.call('build_creative', {
    idempotency_key: key,
    target_format_id: fid('display_300x250_html'),
    message: 'Fresh pasta, every day',
    brand: { domain },
  });
  if (answered === 'at once') return { status: body.status, result: body };
  expect(body.status).toBe('submitted');
  while ((await s.runDue()) > 0);
  return client.poll(body.task_id);
}

forEachDatabase<Parties>(
  'creative brand lookup',
  async (adapter, schema) => {
    const together = await startCreativeServer(adapter, `${schema}_r`, { hosts: [restHost(), restTasks()], extra: [rateLimit(), registryBrands()] });
    const { key } = await newKey(together.server.deployment);
    const saved = await together.server.fetch('/api/brands/save', {
      method: 'POST',
      token: key,
      json: { domain: 'meridian-lookup.example', brand_name: 'Meridian Foods', brand_manifest: MANIFEST },
    });
    expect(saved.status).toBe(200);
    const remote = await startCreativeServer(adapter, `${schema}_c`, {
      creative: { brandRegistryUrl: together.server.base, allowHttpRegistry: true },
      hosts: [restTasks()],
      extra: [crawlerHttp({ allowlist: ['127.0.0.1'] })],
    });
    return { together, remote };
  },
  async ({ together, remote }) => {
    await remote.server.close();
    await together.server.close();
  },
  (get) => {
    test('registry-brands provides BrandLookup from its entries; its resolve endpoint is unchanged', async () => {
      const lookup = get().together.server.deployment.get(BrandLookup);
      expect(await lookup.resolve('Meridian-Lookup.example')).toEqual(MERIDIAN);
      expect(await lookup.resolve('unknown-brand.example')).toBeNull();
      expect(await lookup.resolve('not a domain')).toBeNull();
      const resolved = (await (await get().together.server.fetch('/api/brands/resolve?domain=meridian-lookup.example')).json()) as any;
      expect(resolved).toEqual({
        canonical_id: 'meridian-lookup.example',
        canonical_domain: 'meridian-lookup.example',
        brand_name: 'Meridian Foods',
        keller_type: 'master',
        house_domain: 'meridian-lookup.example',
        source: 'community',
        brand_manifest: MANIFEST,
      });
    });

    test('same deployment: build_creative resolves brand {domain} through the registry plugin', async () => {
      const done = await buildFor(get().together, 'meridian-lookup.example', 'lookup-together-00000001', 'at once');
      expect(done.status).toBe('completed');
      const manifest = done.result!.creative_manifest;
      expect(manifest.brand).toEqual({ domain: 'meridian-lookup.example', brand_kit_override: { colors: { primary: '#0A7E3D', secondary: '#F4F4F4' } } });
      expect(manifest.assets.html_creative.content).toContain('Meridian Foods');
      expect(manifest.assets.html_creative.content).toContain('https://meridian-lookup.example/logo.png');
    });

    test('configured URL: build_creative resolves brand {domain} over HTTP through the crawler', async () => {
      const done = await buildFor(get().remote, 'meridian-lookup.example', 'lookup-remote-000000001', 'as a task');
      expect(done.status).toBe('completed');
      expect(done.result!.creative_manifest.brand.brand_kit_override.colors.primary).toBe('#0A7E3D');
      expect(done.result!.creative_manifest.assets.html_creative.content).toContain('Meridian Foods');

      const unknown = await buildFor(get().remote, 'unknown-brand.example', 'lookup-remote-000000002', 'as a task');
      expect(unknown.status).toBe('failed');
      expect(structuredClone(unknown.result)).toMatchObject({ code: 'REFERENCE_NOT_FOUND', field: 'brand.domain' });
    });

    test('a brand known by its brand.json: colours, the light-background logo, font and tagline, by either adapter', async () => {
      const together = get().together.server;
      const doc = {
        house: { domain: 'summit-lookup.example', name: 'Summit' },
        brands: [
          {
            id: 'summit',
            names: [{ en: 'Summit Gear' }],
            logos: [
              { url: 'https://summit-lookup.example/dark.png', background: 'dark-bg' },
              { url: 'https://summit-lookup.example/logo.png', background: 'light-bg' },
            ],
            colors: { primary: '#1B5E20', secondary: '#F9A825' },
            fonts: { primary: { family: 'Inter' }, secondary: 'Merriweather' },
            tagline: 'Up we go',
          },
        ],
      };
      const records = together.deployment.get(BrandJsonRecords);
      await together.deployment.get(Database).transaction((tx) => records.record(tx, 'summit-lookup.example', doc));
      const expected = {
        domain: 'summit-lookup.example',
        name: 'Summit Gear',
        colors: { primary: '#1B5E20', secondary: '#F9A825' },
        logo_url: 'https://summit-lookup.example/logo.png',
        fonts: { primary: 'Inter', secondary: 'Merriweather' },
        tagline: 'Up we go',
      };
      expect(await together.deployment.get(BrandLookup).resolve('summit-lookup.example')).toEqual(expected);
      const remote = createRegistryBrandLookup(new HttpCrawler({ allowlist: ['127.0.0.1'] }), together.base, { allowHttp: true });
      expect(await remote.resolve('summit-lookup.example')).toEqual(expected);
    });

    test('the URL adapter: null for unknown brands, an error when the registry cannot be asked or is not public', async () => {
      const base = get().together.server.base;
      const lookup = createRegistryBrandLookup(new HttpCrawler({ allowlist: ['127.0.0.1'] }), base, { allowHttp: true });
      expect(await lookup.resolve('meridian-lookup.example')).toEqual(MERIDIAN);
      expect(await lookup.resolve('unknown-brand.example')).toBeNull();
      const down = createRegistryBrandLookup(new HttpCrawler({ allowlist: ['127.0.0.1'] }), 'http://127.0.0.1:9', { allowHttp: true });
      await expect(down.resolve('meridian-lookup.example')).rejects.toBeInstanceOf(CrawlerError);
      // Without the test allowlist, a loopback registry is refused by the SSRF guard.
      const guarded = createRegistryBrandLookup(new HttpCrawler({}), base, { allowHttp: true });
      await expect(guarded.resolve('meridian-lookup.example')).rejects.toMatchObject({ code: 'ssrf_blocked' });
    });
  },
);

test('a registry URL without a crawler in the deployment stops assembly, naming the option', async () => {
  const preset = definePreset({
    name: 'creative-no-crawler',
    plugins: [
      await storagePlugin('pglite', uniqueSchema('creative-nocrawl')),
      auth(),
      tasks({ worker: false }),
      idempotency(),
      creative({ brandRegistryUrl: 'https://registry.example' }),
    ],
  });
  await expect(assemble(preset, { env: { LOG_LEVEL: 'silent' } })).rejects.toThrow('plugins.creative.brandRegistryUrl');
});
