import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { HOSTS, clientFor, type TaskClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { BrandLookup, type BrandLookupPort } from '../../core/ports/brand-lookup.ts';
import { AGENT_URL, fid, startCreativeServer, TOKEN, type CreativeServer } from './fixture.ts';

// Requirement x host: each task over REST, MCP (SDK client) and A2A (SDK client), in the `adcp`
// namespace, every request and answer checked against AdCP 3.0.6 and 3.1.19.
const valid = (file: string, body: unknown) => expect(bothVersionsErrors(file, body)).toEqual([]);

export const ACME_BRAND = { domain: 'acme.example', name: 'Acme Rockets', colors: { primary: '#C8102E', secondary: '#FFD100' } };
/**
 * The registry the matrix deployment resolves brands through (the adapters are tested in
 * brand-lookup.test.ts), as if over the network: builds naming a brand run asynchronously.
 */
const brands: BrandLookupPort = { latency: 'slow', resolve: async (domain) => (domain === 'acme.example' ? ACME_BRAND : null) };

const OFFERING_CATALOG = {
  asset_type: 'catalog',
  type: 'offering',
  items: [{ offering_id: 'skates', name: 'Rocket Skates', description: 'Go faster than the road runner.', landing_url: 'https://acme.example/skates' }],
};

/** A complete native_content manifest (it has a click-through, so it transforms into banners). */
const nativeContent = (clickUrl = 'https://acme.example/skates?cb={CACHEBUSTER}') => ({
  format_id: fid('native_content'),
  assets: {
    headline: { asset_type: 'text', content: 'Rocket Skates for {DEVICE_TYPE}' },
    body: { asset_type: 'text', content: 'Go faster than the road runner.' },
    thumbnail: { asset_type: 'image', url: 'https://cdn.acme.example/skates.jpg', width: 300, height: 300 },
    click_url: { asset_type: 'url', url: clickUrl, url_type: 'clickthrough' },
    disclosure: { asset_type: 'text', content: 'Sponsored by Acme Rockets' },
  },
});

forEachDatabase(
  'creative matrix',
  (adapter, schema) =>
    startCreativeServer(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      overrides: [[BrandLookup, brands]],
      creative: { creativeAgents: [{ agent_url: 'https://dco.partner.example', agent_name: 'Partner DCO', capabilities: ['generation'] }] },
    }),
  async (s) => s.server.close(),
  (get) => {
    for (const host of HOSTS) {
      describe(host, () => {
        let client: TaskClient;
        let s: CreativeServer;
        const call = async (name: string, args: Record<string, any>, requestSchema?: string) => {
          if (requestSchema) valid(requestSchema, args);
          return client.call(name, args);
        };
        beforeAll(async () => {
          s = get();
          client = await clientFor(host, s.server, TOKEN);
        });
        afterAll(async () => client?.close());

        test('list_creative_formats: the whole catalog under this agent URL, with federated agents', async () => {
          const { ok, body } = await call('list_creative_formats', { context: { trace: host } }, 'creative/list-creative-formats-request.json');
          expect(ok).toBe(true);
          valid('creative/list-creative-formats-response.json', body);
          expect(body.formats).toHaveLength(80); // 70 reference formats, this agent's 8 templates and 2 hosted video formats
          expect(body.formats.every((f: any) => f.format_id.agent_url === AGENT_URL)).toBe(true);
          expect(body.formats[0].format_id).toEqual({ agent_url: AGENT_URL, id: 'display_generative' });
          expect(body.pagination).toEqual({ has_more: false });
          expect(body.creative_agents).toEqual([{ agent_url: 'https://dco.partner.example', agent_name: 'Partner DCO', capabilities: ['generation'] }]);
          expect(body.context).toEqual({ trace: host });
          // Reference tracker slots are AdCP url slots with their role.
          const tracker = body.formats[0].assets.find((a: any) => a.asset_id === 'impression_tracker');
          expect(structuredClone(tracker)).toMatchObject({ asset_type: 'url', requirements: { role: 'impression_tracker' } });
        });

        test('list_creative_formats: every filter of the spec', async () => {
          const list = async (args: Record<string, unknown>) => {
            const { ok, body } = await call('list_creative_formats', args, 'creative/list-creative-formats-request.json');
            expect(ok).toBe(true);
            valid('creative/list-creative-formats-response.json', body);
            return body.formats as any[];
          };
          const ids = (formats: any[]) => formats.map((f) => f.format_id.id);
          const video = await list({ type: 'video' });
          expect(video.length).toBe(18); // 16 reference video formats and the 2 hosted ones
          expect(video.every((f) => f.type === 'video')).toBe(true);

          const html = await list({ asset_types: ['html'] });
          expect(html.length).toBeGreaterThan(5);
          expect(html.every((f) => f.assets.some((a: any) => a.asset_type === 'html'))).toBe(true);

          const small = await list({ max_width: 300, max_height: 250 });
          expect(ids(small)).toContain('display_300x250_image');
          expect(ids(small)).not.toContain('display_728x90_image');
          expect(ids(small)).not.toContain('display_html'); // no fixed size: not in a size filter
          for (const f of small) {
            const d = f.renders.find((r: any) => r.role === 'primary').dimensions;
            expect(d.width <= 300 && d.height <= 250).toBe(true);
          }

          const responsive = await list({ is_responsive: true });
          expect(ids(responsive)).toEqual(expect.arrayContaining(['display_html', 'native_standard', 'video_vast']));
          expect(responsive.some((f) => f.renders?.[0]?.dimensions?.width)).toBe(false);
          const fixed = await list({ is_responsive: false });
          expect(ids(fixed)).toContain('display_300x250_html');
          expect(fixed.length + responsive.length).toBe(80 - 4); // audio formats have no size either way

          expect(ids(await list({ name_search: 'SKYSCRAPER' }))).toEqual(expect.arrayContaining(['display_160x600_image', 'display_160x600_html']));
          expect(ids(await list({ format_ids: [fid('native_standard'), { agent_url: 'https://other.example', id: 'display_300x250_image' }] }))).toEqual([
            'native_standard',
          ]);
          expect(await list({ format_ids: [{ agent_url: 'https://other.example', id: 'native_standard' }] })).toEqual([]);
          expect(ids(await list({ type: 'display', asset_types: ['image'], min_width: 900 }))).toEqual(expect.arrayContaining(['display_970x250_image']));
        });

        test('list_creative_formats: cursor pages walk the catalog once, in order', async () => {
          const all = (await client.call('list_creative_formats', {})).body.formats.map((f: any) => f.format_id.id);
          const seen: string[] = [];
          let cursor: string | undefined;
          for (let page = 0; page < 20; page++) {
            const args = { pagination: { max_results: 10, ...(cursor ? { cursor } : {}) } };
            const { body } = await call('list_creative_formats', args, 'creative/list-creative-formats-request.json');
            valid('creative/list-creative-formats-response.json', body);
            seen.push(...body.formats.map((f: any) => f.format_id.id));
            if (!body.pagination.has_more) break;
            cursor = body.pagination.cursor;
          }
          expect(seen).toEqual(all);
        });

        test('build_creative generation: submitted, working with progress, completed; brand resolved by domain', async () => {
          const args = {
            idempotency_key: `gen-${host}-0000000000001`,
            target_format_id: fid('display_300x250_html'),
            message: 'Spring sale on rocket skates',
            brand: { domain: 'acme.example' },
            creative_manifest: { format_id: fid('display_300x250_html'), assets: { offerings: OFFERING_CATALOG } },
            context: { run: host },
          };
          const first = await call('build_creative', args, 'media-buy/build-creative-request.json');
          expect(first.ok).toBe(true);
          expect(structuredClone(first.body)).toMatchObject({ status: 'submitted', task_id: expect.any(String), context: { run: host } });
          valid('media-buy/build-creative-async-response-submitted.json', first.body);
          // 3.1 also lists the submitted envelope among build responses; 3.0.6's build response has no such branch.
          expect(bothVersionsErrors('media-buy/build-creative-response.json', first.body).filter((e) => e.startsWith('3.1.19'))).toEqual([]);
          const id = first.body.task_id;

          expect((await client.poll(id)).status).toBe('submitted');
          expect(await s.runDue()).toBe(1); // brand step
          expect((await client.poll(id)).status).toBe('working');
          expect(await s.runDue()).toBe(1); // generation step
          const done = await client.poll(id);
          expect(done.status).toBe('completed');
          valid('media-buy/build-creative-response.json', done.result);
          const manifest = done.result!.creative_manifest;
          expect(manifest.format_id).toEqual(fid('display_300x250_html'));
          expect(manifest.brand).toEqual({ domain: 'acme.example', brand_kit_override: { colors: { primary: '#C8102E', secondary: '#FFD100' } } });
          const html: string = manifest.assets.html_creative.content;
          expect(html).toContain('Rocket Skates');
          expect(html).toContain('Acme Rockets');
          expect(html).toContain('#C8102E');
          expect(html).toContain('https://acme.example/skates');
          expect(html).not.toContain('<script');
          expect(done.result!.context).toEqual({ run: host });

          // A replay returns the first answer; the task is not started twice.
          const replay = await client.call('build_creative', args);
          expect(structuredClone(replay.body)).toMatchObject({ task_id: id, replayed: true });
          expect(await s.runDue()).toBe(0);
        });

        test('build_creative transformation: a complete manifest re-targeted at once, with a hosted banner image', async () => {
          const args = {
            idempotency_key: `xform-${host}-000000000001`,
            creative_manifest: nativeContent('https://acme.example/skates'),
            target_format_id: fid('display_300x250_image'),
          };
          const { ok, body } = await call('build_creative', args, 'media-buy/build-creative-request.json');
          expect(ok).toBe(true);
          expect(body.status).toBe('completed');
          valid('media-buy/build-creative-response.json', body);
          const { banner_image, click_url } = body.creative_manifest.assets;
          expect(click_url).toEqual({ asset_type: 'url', url: 'https://acme.example/skates', url_type: 'clickthrough' });
          expect(structuredClone(banner_image)).toMatchObject({ asset_type: 'image', width: 300, height: 250, format: 'svg' });
          expect(Date.parse(body.expires_at)).toBeGreaterThan(Date.now());
          const image = await fetch(banner_image.url);
          expect(image.status).toBe(200);
          expect(image.headers.get('content-type')).toBe('image/svg+xml');
          const svg = await image.text();
          expect(svg).toContain('Rocket Skates for {DEVICE_TYPE}'); // the source headline
          expect(svg).not.toContain('<script');

          const multi = await call(
            'build_creative',
            {
              idempotency_key: `xform-${host}-000000000002`,
              creative_manifest: nativeContent('https://acme.example/skates'),
              target_format_ids: [fid('display_728x90_html'), fid('display_300x250_html')],
            },
            'media-buy/build-creative-request.json',
          );
          valid('media-buy/build-creative-response.json', multi.body);
          expect(multi.body.creative_manifests.map((m: any) => m.format_id.id)).toEqual(['display_728x90_html', 'display_300x250_html']);
        });

        test('preview_creative single: one served preview per input variant, macros substituted', async () => {
          const args = {
            request_type: 'single',
            creative_manifest: nativeContent(),
            inputs: [
              { name: 'Desktop', macros: { DEVICE_TYPE: 'desktop', CACHEBUSTER: '111' } },
              { name: 'Mobile', macros: { DEVICE_TYPE: 'mobile', CACHEBUSTER: '222' } },
            ],
          };
          const { ok, body } = await call('preview_creative', args, 'creative/preview-creative-request.json');
          expect(ok).toBe(true);
          valid('creative/preview-creative-response.json', body);
          expect(body.response_type).toBe('single');
          expect(body.previews.map((p: any) => p.input.name)).toEqual(['Desktop', 'Mobile']);
          for (const [i, device] of ['desktop', 'mobile'].entries()) {
            const preview = body.previews[i];
            expect(preview.renders[0].preview_url).toBe(preview.preview_url);
            expect(preview.preview_url).toStartWith(`${s.server.base}/previews/`);
            const page = await fetch(preview.preview_url);
            expect(page.status).toBe(200);
            expect(page.headers.get('content-security-policy')).toContain("script-src 'none'");
            const html = await page.text();
            expect(html).toContain(`Rocket Skates for ${device}`);
            expect(html).toContain(`cb=${i === 0 ? 111 : 222}`);
          }
          expect(Date.parse(body.expires_at) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
        });

        test('preview_creative batch: one result per request, in order, failures beside successes; html output', async () => {
          const args = {
            request_type: 'batch',
            output_format: 'html',
            requests: [
              { creative_manifest: nativeContent() },
              { creative_manifest: { ...nativeContent(), format_id: fid('no_such_format') } },
              { creative_manifest: nativeContent(), output_format: 'url' },
            ],
          };
          const { ok, body } = await call('preview_creative', args, 'creative/preview-creative-request.json');
          expect(ok).toBe(true);
          valid('creative/preview-creative-response.json', body);
          expect(body.results.map((r: any) => r.success)).toEqual([true, false, true]);
          expect(structuredClone(body.results[1].errors[0])).toMatchObject({ code: 'FORMAT_NOT_SUPPORTED', field: 'requests[1].creative_manifest.format_id' });
          const html = body.results[0].response.previews[0].preview_html;
          expect(html).toContain('Rocket Skates for {DEVICE_TYPE}');
          expect(html).not.toContain('<script');
          expect(body.results[2].response.previews[0].preview_url).toStartWith(`${s.server.base}/previews/`);
        });

        test('errors in the creative shape: 400 invalid format id, 404 unsupported format, 422 missing asset', async () => {
          const bare = await call('preview_creative', { request_type: 'single', format_id: 'native_standard', creative_manifest: nativeContent() });
          expect(bare.ok).toBe(false);
          // adcp: the standard code, the creative code kept in details.
          expect(structuredClone(bare.body)).toMatchObject({
            code: 'INVALID_REQUEST',
            field: 'format_id',
            error: { code: 'INVALID_REQUEST', message: expect.any(String) },
          });
          expect(bare.body.adcp_error.details).toEqual({ code: 'INVALID_FORMAT_ID' });
          const foreign = await call('build_creative', {
            idempotency_key: `foreign-${host}-00000001`,
            target_format_id: { agent_url: 'https://other.example', id: 'other_story_1080x1920' },
            message: 'x',
            brand: { domain: 'acme.example' },
          });
          expect(structuredClone(foreign.body)).toMatchObject({
            code: 'FORMAT_NOT_SUPPORTED',
            field: 'target_format_id',
            error: { code: 'FORMAT_NOT_SUPPORTED' },
          });
          valid('media-buy/build-creative-response.json', foreign.body);
          const { click_url: _c, ...assets } = nativeContent().assets;
          const missing = await call('preview_creative', { request_type: 'single', creative_manifest: { format_id: fid('native_content'), assets } });
          expect(structuredClone(missing.body)).toMatchObject({
            code: 'VALIDATION_ERROR',
            field: 'creative_manifest.assets.click_url',
            error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('click_url') },
          });
          for (const b of [bare.body, foreign.body, missing.body]) valid('core/error.json', b.adcp_error);
        });

        test('capabilities declare the creative protocol and its features', async () => {
          const { body } = await client.call('get_adcp_capabilities', {});
          valid('protocol/get-adcp-capabilities-response.json', body);
          expect(body.supported_protocols).toEqual(['creative']);
          expect(body.creative).toEqual({ supports_generation: true, supports_transformation: true, has_creative_library: false, supports_compliance: false });
        });
      });
    }

    test('REST answers creative failures with their HTTP status and {error: {code, message}}', async () => {
      const s = get();
      const post = (name: string, json: unknown) => s.server.fetch(`/tasks/${name}`, { method: 'POST', token: TOKEN, json });
      const bad = await post('list_creative_formats', { format_ids: ['display_300x250_image'] });
      expect(bad.status).toBe(400);
      expect(structuredClone(await bad.json())).toMatchObject({
        error: { code: 'INVALID_REQUEST' },
        field: 'format_ids[0]',
        adcp_error: { details: { code: 'INVALID_FORMAT_ID' } },
      });
      const unknown = await post('preview_creative', { request_type: 'single', creative_manifest: { ...nativeContent(), format_id: fid('no_such_format') } });
      expect(unknown.status).toBe(404);
      const { disclosure: _d, ...assets } = nativeContent().assets;
      const missing = await post('preview_creative', { request_type: 'single', creative_manifest: { format_id: fid('native_content'), assets } });
      expect(missing.status).toBe(422);
      expect(structuredClone(await missing.json())).toMatchObject({ error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('disclosure') } });
      // Listing formats needs no credential.
      const anonymous = await s.server.fetch('/tasks/list_creative_formats', { method: 'POST', json: { type: 'audio' } });
      expect(anonymous.status).toBe(200);
    });
  },
);
