/**
 * Test-controller scenarios of the creative and brand paths of the test agent: formats seeded for one
 * sandbox account (seed_creative_format) and a sponsored-intelligence session ended on demand
 * (force_session_status), as the official storyboards use them.
 */
import { expect, test } from 'bun:test';
import preset, { TEST_TOKEN } from '../../config/test-agent.ts';
import { forEachDatabase } from '../support/db.ts';
import { restClient } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';

forEachDatabase<TestServer>(
  'test agent controls',
  (adapter, schema) => startServer(adapter, schema, preset.plugins.slice(1), { env: { PROTOCOL_NAMESPACE: 'adcp' } }),
  (s) => s.close(),
  (get) => {
    test('seed_creative_format: the account that seeded formats lists exactly those, paged; other callers keep the catalog', async () => {
      const sales = restClient(get(), TEST_TOKEN, '/sales');
      const account = { account_id: `acct_seeded_formats_${Date.now()}` };
      for (const [i, name] of ['Seeded A', 'Seeded B'].entries()) {
        const seeded = await sales.call('comply_test_controller', {
          account,
          scenario: 'seed_creative_format',
          params: { format_id: `seeded_format_${i}`, fixture: { name, type: 'display' } },
        });
        expect(seeded.body.success).toBe(true);
      }
      const first = await sales.call('list_creative_formats', { account, pagination: { max_results: 1 } });
      expect(bothVersionsErrors('creative/list-creative-formats-response.json', first.body)).toEqual([]);
      expect(first.body.formats.map((f: any) => f.format_id.id)).toEqual(['seeded_format_0']);
      expect(first.body.pagination.has_more).toBe(true);
      const second = await sales.call('list_creative_formats', { account, pagination: { max_results: 1, cursor: first.body.pagination.cursor } });
      expect(second.body.formats.map((f: any) => f.name)).toEqual(['Seeded B']);
      expect(second.body.pagination.has_more).toBe(false);
      // Without the account (or under another one) the catalog is unchanged.
      const catalog = await sales.call('list_creative_formats', { pagination: { max_results: 100 } });
      expect(catalog.body.formats.length).toBeGreaterThan(10);
      expect(catalog.body.formats.some((f: any) => f.format_id.id.startsWith('seeded_format_'))).toBe(false);
      const noAccount = await sales.call('comply_test_controller', { scenario: 'seed_creative_format', params: { format_id: 'x' } });
      expect(noAccount.body).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
    });

    test("seed_product: a fixture's format ids that name no agent are the platform's own, and list_creative_formats resolves them verbatim", async () => {
      const sales = restClient(get(), TEST_TOKEN, '/sales');
      for (const [product_id, id] of [
        ['fixture_video_q2', 'video_15s'],
        ['fixture_display_q2', 'display_300x250'],
      ] as const) {
        const seeded = await sales.call('comply_test_controller', {
          scenario: 'seed_product',
          params: { product_id, fixture: { channels: ['video'], format_ids: [{ id }] } },
        });
        expect(seeded.body.success).toBe(true);
        const products = await sales.call('get_products', { buying_mode: 'brief', brief: product_id.replace(/_/g, ' ') });
        const advertised = products.body.products.find((p: any) => p.product_id === product_id).format_ids[0];
        expect(advertised.id).toBe(id);
        const listed = await sales.call('list_creative_formats', { format_ids: [advertised] });
        expect(bothVersionsErrors('creative/list-creative-formats-response.json', listed.body)).toEqual([]);
        expect(listed.body.formats.map((f: any) => f.format_id)).toEqual([advertised]);
      }
    });

    test("build_creative to a display format of the seller's own platform (an example host) that names a template size is built with that template, under the id asked for; a real agent's unknown format is still refused", async () => {
      const sales = restClient(get(), TEST_TOKEN, '/sales');
      const build = (agent_url: string) =>
        sales.call('build_creative', {
          idempotency_key: `build-example-${agent_url.length}-${Date.now()}`,
          message: 'A display ad for the steakhouse catalog',
          target_format_id: { agent_url, id: 'display_300x250_catalog' },
          account: { brand: { domain: 'acme-outdoor.example' }, operator: 'pinnacle-agency.example' },
          quality: 'draft',
          include_preview: true,
        });
      const built = await build('https://your-agent.example.com');
      expect(bothVersionsErrors('media-buy/build-creative-response.json', built.body)).toEqual([]);
      // Answers name this agent's URL (the platform the example host stands for), with the id asked for.
      expect(built.body.creative_manifest.format_id.id).toBe('display_300x250_catalog');
      expect(Object.keys(built.body.creative_manifest.assets)).toEqual(expect.arrayContaining(['image', 'click_url']));
      const refused = await build('https://creative.vendor-without-this-format.com');
      expect(refused.body.code ?? refused.body.errors?.[0]?.code).toBe('FORMAT_NOT_SUPPORTED');
    });

    test("a creative pushed with a format of the seller's own platform (an example host) previews from its own assets in the sandbox; a real agent's unknown format is still refused", async () => {
      const sales = restClient(get(), TEST_TOKEN, '/sales');
      const manifest = (agent_url: string) => ({
        format_id: { agent_url, id: 'native_post' },
        assets: {
          headline: { asset_type: 'text', content: 'Summer Sale' },
          body: { asset_type: 'text', content: 'Top-rated outdoor gear.' },
          image: { asset_type: 'image', url: 'https://cdn.acme.example/hero.jpg', width: 1200, height: 628 },
          click_url: { asset_type: 'url', url: 'https://acmeoutdoor.example/summer-sale' },
        },
      });
      const previewed = await sales.call('preview_creative', {
        request_type: 'single',
        creative_manifest: manifest('https://your-platform.example.com'),
        output_format: 'url',
      });
      expect(bothVersionsErrors('creative/preview-creative-response.json', previewed.body)).toEqual([]);
      const url = previewed.body.previews[0].renders[0].preview_url as string;
      const page = await (await get().fetch(new URL(url).pathname)).text();
      expect(page).toContain('Summer Sale');
      expect(page).toContain('Top-rated outdoor gear.');
      const refused = await sales.call('preview_creative', {
        request_type: 'single',
        creative_manifest: manifest('https://creative.real-vendor.com'),
        output_format: 'url',
      });
      expect(refused.body.code).toBe('FORMAT_NOT_SUPPORTED');
    });

    test('force_session_status: a session ended by the controller refuses further messages', async () => {
      const brand = restClient(get(), TEST_TOKEN, '/brand');
      const opened = await brand.call('si_initiate_session', {
        idempotency_key: `controls-session-${Date.now()}`,
        intent: 'comply test',
        identity: { consent_granted: true },
      });
      const session = opened.body.session_id;
      // The session's latest answer, drawn for the host under the agent's mount.
      const preview = await get().fetch(`/brand/si/preview/${session}`, { token: TEST_TOKEN });
      expect(preview.status).toBe(200);
      expect(preview.headers.get('content-type')).toStartWith('text/html');
      expect(await preview.text()).toContain('Buy');
      const forced = await brand.call('comply_test_controller', {
        scenario: 'force_session_status',
        params: { session_id: session, status: 'terminated', termination_reason: 'session_timeout' },
      });
      expect(forced.body).toMatchObject({ success: true, previous_state: 'active', current_state: 'terminated' });
      const refused = await brand.call('si_send_message', { idempotency_key: `controls-message-${Date.now()}`, session_id: session, message: 'still there?' });
      expect(refused.body.code).toBe('SESSION_TERMINATED');
      const again = await brand.call('comply_test_controller', { scenario: 'force_session_status', params: { session_id: session, status: 'complete' } });
      expect(again.body).toMatchObject({ success: false, error: 'INVALID_TRANSITION', current_state: 'terminated' });
      const unknown = await brand.call('comply_test_controller', {
        scenario: 'force_session_status',
        params: { session_id: '01900000-0000-7000-8000-000000000009', status: 'terminated' },
      });
      expect(unknown.body).toMatchObject({ success: false, error: 'NOT_FOUND' });
    });
  },
);
