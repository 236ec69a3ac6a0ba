import { afterAll, beforeAll, expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { mcpClient, type TaskClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { BrandLookup, type BrandLookupPort } from '../../core/ports/brand-lookup.ts';
import { AGENT_URL, fid, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';

// What the official AdCP storyboards (creative_template, creative_generative) ask of a creative
// agent, as a buyer's requests shape it: format ids under the buyer's idea of the agent URL,
// plain-size templates, builds answered in the response, the account's brand.
const valid = (file: string, body: unknown) => expect(bothVersionsErrors(file, body)).toEqual([]);

/** A registry in the same deployment (a local read: builds naming a brand answer at once). */
const brands: BrandLookupPort = {
  resolve: async (domain) => (domain === 'trail.example' ? { domain, name: 'Trail Co', colors: { primary: '#1B5E20', secondary: '#FF6F00' } } : null),
};
/** A format id as a buyer may write it: another agent URL (a placeholder), one of our ids. */
const elsewhere = (id: string) => ({ agent_url: 'https://your-agent.example.com', id });
const image = (width: number, height: number) => ({ asset_type: 'image', url: `https://cdn.trail.example/hero-${width}x${height}.jpg`, width, height });
const clickUrl = { asset_type: 'url', url: 'https://trail.example/sale' };
const headline = { asset_type: 'text', content: 'Summer Sale: 40% Off' };

forEachDatabase(
  'creative interop',
  (adapter, schema) => startCreativeServer(adapter, schema, { env: { PROTOCOL_NAMESPACE: 'adcp' }, overrides: [[BrandLookup, brands]] }),
  async (s) => s.server.close(),
  (get) => {
    let s: CreativeServer;
    let client: TaskClient;
    beforeAll(async () => {
      s = get();
      client = await mcpClient(s.server, TOKEN);
    });
    afterAll(async () => client?.close());

    test('the first format listed says what it renders at: a template takes its size from the format id', async () => {
      const { body } = await client.call('list_creative_formats', { pagination: { max_results: 1 } });
      valid('creative/list-creative-formats-response.json', body);
      expect(body.formats[0].format_id).toEqual(fid('display_generative'));
      expect(body.formats[0].renders).toEqual([{ role: 'primary', parameters_from_format_id: true }]);
    });

    test("another agent URL with an id this agent knows: built from this catalog's definition, answered under this agent's URL", async () => {
      const { body } = await client.call('build_creative', {
        idempotency_key: 'interop-elsewhere-000001',
        message: 'A summer sale on trail gear',
        target_format_id: elsewhere('display_300x250_generative'),
        brand: { domain: 'trail.example' },
      });
      valid('media-buy/build-creative-response.json', body);
      expect(body.creative_manifest.format_id).toEqual(fid('display_300x250_generative'));
      // An id known nowhere here is still refused, naming the agent the buyer named.
      const unknown = await client.call('build_creative', {
        idempotency_key: 'interop-elsewhere-000002',
        message: 'x',
        target_format_id: elsewhere('display_301x251'),
        brand: { domain: 'trail.example' },
      });
      expect(structuredClone(unknown.body)).toMatchObject({ code: 'FORMAT_NOT_SUPPORTED', field: 'target_format_id' });
      expect(unknown.body.message).toContain('https://your-agent.example.com');
    });

    test('a generation with a brand the deployment knows answers in the response (no task), in the brand colours', async () => {
      const { body } = await client.call('build_creative', {
        idempotency_key: 'interop-at-once-0000001',
        message: 'A summer sale on trail gear',
        target_format_id: fid('display_300x250_html'),
        brand: { domain: 'trail.example' },
      });
      expect(body.status).toBe('completed');
      expect(body.task_id).toBeUndefined();
      valid('media-buy/build-creative-response.json', body);
      expect(body.creative_manifest.assets.html_creative.content).toContain('Trail Co');
      expect(body.creative_manifest.assets.html_creative.content).toContain('#1B5E20');
    });

    test("the account's brand stands in when the request names none; one no registry knows is shown by its domain", async () => {
      const build = (domain: string, key: string) =>
        client.call('build_creative', {
          idempotency_key: key,
          message: 'A summer sale on trail gear',
          target_format_id: fid('display_300x250_html'),
          account: { brand: { domain }, operator: 'agency.example' },
        });
      const known = await build('trail.example', 'interop-account-0000001');
      valid('media-buy/build-creative-response.json', known.body);
      expect(known.body.creative_manifest.assets.html_creative.content).toContain('Trail Co');
      const unregistered = await build('nobody-registered.example', 'interop-account-0000002');
      valid('media-buy/build-creative-response.json', unregistered.body);
      expect(unregistered.body.creative_manifest.assets.html_creative.content).toContain('nobody-registered.example');
      // An explicit brand nobody knows is still refused.
      const { body } = await client.call('build_creative', {
        idempotency_key: 'interop-account-0000003',
        message: 'x',
        target_format_id: fid('display_300x250_html'),
        brand: { domain: 'nobody-registered.example' },
        account: { brand: { domain: 'trail.example' }, operator: 'agency.example' },
      });
      expect(structuredClone(body)).toMatchObject({ code: 'REFERENCE_NOT_FOUND', field: 'brand.domain' });
    });

    test('plain-size templates: a manifest previews, builds as it is, and a source master adapts to several sizes', async () => {
      const manifest = { format_id: elsewhere('display_300x250'), assets: { image: image(300, 250), click_url: clickUrl, headline } };
      const preview = await client.call('preview_creative', { request_type: 'single', creative_manifest: manifest });
      valid('creative/preview-creative-response.json', preview.body);
      expect(preview.body.previews[0].renders[0]).toMatchObject({ output_format: 'url', dimensions: { width: 300, height: 250 } });

      const built = await client.call('build_creative', {
        idempotency_key: 'interop-template-000001',
        creative_manifest: manifest,
        target_format_id: elsewhere('display_300x250'),
        brand: { domain: 'trail.example' },
      });
      valid('media-buy/build-creative-response.json', built.body);
      expect(built.body.creative_manifest).toMatchObject({ format_id: fid('display_300x250'), assets: manifest.assets });

      // Both target fields (AdCP 3.0 schemas allow it): the list governs.
      const adapted = await client.call('build_creative', {
        idempotency_key: 'interop-template-000002',
        creative_manifest: { format_id: elsewhere('source_master'), assets: { image: image(1200, 628), click_url: clickUrl, headline } },
        target_format_id: fid('display_generative'),
        target_format_ids: ['display_300x250', 'display_728x90', 'display_320x50'].map(elsewhere),
        brand: { domain: 'trail.example' },
      });
      valid('media-buy/build-creative-response.json', adapted.body);
      const manifests = adapted.body.creative_manifests as any[];
      expect(manifests.map((m) => m.format_id)).toEqual([fid('display_300x250'), fid('display_728x90'), fid('display_320x50')]);
      expect(manifests.map((m) => [m.assets.image.width, m.assets.image.height])).toEqual([
        [300, 250],
        [728, 90],
        [320, 50],
      ]);
      expect(manifests.every((m) => m.assets.click_url.url === clickUrl.url && m.assets.headline.content === headline.content)).toBe(true);
      expect(AGENT_URL).not.toBe(elsewhere('x').agent_url);
    });
  },
);
