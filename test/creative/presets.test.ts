import { expect, test } from 'bun:test';
import testAgentPreset, { TEST_TOKEN } from '../../config/test-agent.ts';
import creativePreset from '../../config/creative-agent.ts';
import { forEachDatabase } from '../support/db.ts';
import { a2aClient, mcpClient, restClient } from '../support/agent.ts';
import { freePort, startServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { newKey } from '../support/principals.ts';
import { nativeManifest } from './fixture.ts';

// The creative library (seeded through the test controller), its accounts, and the ad server's tasks too.
const CREATIVE_TOOLS = [
  'build_creative',
  'comply_test_controller',
  'get_adcp_capabilities',
  'get_creative_delivery',
  'get_creative_features',
  'get_task_status',
  'list_accounts',
  'list_creative_formats',
  'list_creatives',
  'list_transformers',
  'preview_creative',
  'report_usage',
  'sync_accounts',
  'sync_creatives',
  'validate_input',
];

// Each preset's own plugin list, minus its storage entry (the test server adds an isolated one).
forEachDatabase(
  'creative tenants of the test agent',
  (adapter, schema) => startServer(adapter, schema, testAgentPreset.plugins.slice(1), { env: { PROTOCOL_NAMESPACE: 'adcp' } }),
  async (s) => s.close(),
  (get) => {
    const agentUrl = () => `http://localhost:${get().deployment.config.server.port}`;
    const manifest = () => ({ ...nativeManifest(), format_id: { agent_url: agentUrl(), id: 'native_standard' } });

    test('adagents.json lists /creative and /creative-builder with their endpoints and tools', async () => {
      const body = (await (await get().fetch('/.well-known/adagents.json')).json()) as any;
      for (const id of ['creative', 'creative-builder']) {
        const tenant = body.tenants.find((t: any) => t.id === id);
        expect(tenant).toMatchObject({
          path: `/${id}`,
          mcp: `${get().base}/${id}/mcp`,
          a2a: `${get().base}/${id}/.well-known/agent-card.json`,
          rest: `${get().base}/${id}/tasks/{name}`,
        });
        expect(tenant.tools.sort()).toEqual(CREATIVE_TOOLS);
        expect(body.authorized_agents.map((a: any) => a.url)).toContain(tenant.mcp);
      }
      expect(body.tenants.find((t: any) => t.id === 'signals').tools).toContain('get_signals');
    });

    test('each creative tenant serves the creative tasks over MCP, A2A and REST with the published token', async () => {
      for (const id of ['creative', 'creative-builder']) {
        const mcp = await mcpClient(get(), TEST_TOKEN, `/${id}/mcp`);
        const listed = await mcp.call('list_creative_formats', { type: 'audio' });
        expect(listed.body.formats.map((f: any) => f.format_id.agent_url)).toEqual([agentUrl(), agentUrl(), agentUrl(), agentUrl()]);
        const preview = await mcp.call('preview_creative', { request_type: 'single', creative_manifest: manifest() });
        expect(preview.ok).toBe(true);
        expect(bothVersionsErrors('creative/preview-creative-response.json', preview.body)).toEqual([]);
        // Signals are not served on a creative path.
        expect((await mcp.call('get_signals', { signal_spec: 'cars' })).body.code).toBe('INVALID_REQUEST');
        await mcp.close();

        const a2a = await a2aClient(get(), TEST_TOKEN, `/${id}`);
        const built = await a2a.call('build_creative', {
          idempotency_key: `preset-${id}-000000000001`,
          target_format_id: { agent_url: agentUrl(), id: 'display_300x250_html' },
          message: 'Hello',
          creative_manifest: {
            format_id: { agent_url: agentUrl(), id: 'display_300x250_html' },
            assets: { promoted_offerings: { brand_manifest: { name: 'Acme' } } },
          },
        });
        // A stateless creative agent's build answers at once (the test agent adds no delay).
        expect(built.body.status).toBe('completed');
        expect(built.body.creative_manifest.format_id).toEqual({ agent_url: agentUrl(), id: 'display_300x250_html' });

        const rest = restClient(get(), TEST_TOKEN, `/${id}`);
        expect((await rest.call('list_creative_formats', { name_search: 'billboard' })).body.formats.length).toBeGreaterThan(0);
      }
      const card = (await (await get().fetch('/creative-builder/.well-known/agent-card.json')).json()) as any;
      expect(card.name).toBe('Test agent: Creative builder');
      expect(card.skills.map((s: any) => s.id).sort()).toEqual(CREATIVE_TOOLS);
    });

    test('capabilities of the creative mount declare the creative protocol, valid against both AdCP versions', async () => {
      const mcp = await mcpClient(get(), TEST_TOKEN, '/creative/mcp');
      const { body } = await mcp.call('get_adcp_capabilities', {});
      await mcp.close();
      expect(bothVersionsErrors('protocol/get-adcp-capabilities-response.json', body)).toEqual([]);
      expect(body.supported_protocols).toEqual(['creative']); // a path-routed mount describes its own specialism
      expect(body.creative.supports_generation).toBe(true);
    });
  },
);

/**
 * The creative-agent preset: generation and transformation, and an ad server over its own library
 * (accounts, sync and list, serving tags, trackers, delivery, usage); none of the seller's tasks.
 */
const CREATIVE_AGENT_TOOLS = CREATIVE_TOOLS.filter((t) => t !== 'comply_test_controller');

forEachDatabase(
  'creative agent preset',
  (adapter, schema) => {
    // Trackers and format ids carry PUBLIC_URL: the server's real loopback address.
    const port = freePort();
    return startServer(adapter, schema, creativePreset.plugins.slice(1), { env: { PUBLIC_URL: `http://127.0.0.1:${port}`, PROTOCOL_NAMESPACE: 'adcp' }, port });
  },
  async (s) => s.close(),
  (get) => {
    test("MCP, A2A and REST offer the creative and ad-server tasks, not the seller's; capabilities say so", async () => {
      const { key } = await newKey(get().deployment);
      const listed = await get().fetch('/mcp', {
        method: 'POST',
        headers: { accept: 'application/json', 'mcp-protocol-version': '2025-06-18' },
        token: key,
        json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      expect(((await listed.json()) as any).result.tools.map((t: any) => t.name).sort()).toEqual(CREATIVE_AGENT_TOOLS);
      const mcp = await mcpClient(get(), key);
      const capabilities = await mcp.call('get_adcp_capabilities', {});
      await mcp.close();
      const card = (await (await get().fetch('/.well-known/agent-card.json')).json()) as any;
      expect(card.skills.map((s: any) => s.id).sort()).toEqual(CREATIVE_AGENT_TOOLS);
      // The seller's tasks are not served (its accounts plugin offers sync_governance, for media buys).
      for (const task of ['sync_governance', 'get_products'])
        expect((await get().fetch(`/tasks/${task}`, { method: 'POST', token: key, json: {} })).status).toBe(404);
      expect(bothVersionsErrors('protocol/get-adcp-capabilities-response.json', capabilities.body)).toEqual([]);
      expect(capabilities.body.supported_protocols).toEqual(['creative']);
      expect(capabilities.body.specialisms).toEqual(expect.arrayContaining(['creative-ad-server', 'creative-generative']));
      expect(capabilities.body.creative.has_creative_library).toBe(true);
    });

    test('over HTTP: sync_accounts, sync_creatives, list_creatives, a serving tag, tracker hits, get_creative_delivery, report_usage', async () => {
      const s = get();
      const { key } = await newKey(s.deployment);
      const other = await newKey(s.deployment);
      const mcp = await mcpClient(s, key);
      const account = { brand: { domain: 'acme.example' }, operator: 'acme.example' };
      const hero = {
        creative_id: 'hero_300x250',
        name: 'Hero banner',
        format_id: { agent_url: s.base, id: 'display_300x250_image' },
        assets: {
          banner_image: { asset_type: 'image', url: 'https://cdn.acme.example/hero.png', width: 300, height: 250 },
          click_url: { asset_type: 'url', url_type: 'clickthrough', url: 'https://acme.example/landing' },
        },
      };
      // Not a sandbox: the library's account is declared first.
      const unknown = await mcp.call('sync_creatives', { idempotency_key: 'preset-sync-0000000000001', account, creatives: [hero] });
      expect(unknown.body.code ?? unknown.body.error?.code).toBe('ACCOUNT_NOT_FOUND');
      const accounts = await mcp.call('sync_accounts', { idempotency_key: 'preset-accounts-000000001', accounts: [{ ...account, billing: 'operator' }] });
      expect(bothVersionsErrors('account/sync-accounts-response.json', accounts.body)).toEqual([]);
      expect(accounts.body.accounts[0]).toMatchObject({ action: 'created', status: 'active' });

      const synced = await mcp.call('sync_creatives', { idempotency_key: 'preset-sync-0000000000002', account, creatives: [hero] });
      expect(bothVersionsErrors('creative/sync-creatives-response.json', synced.body)).toEqual([]);
      expect(synced.body.creatives.map((c: any) => [c.creative_id, c.action])).toEqual([['hero_300x250', 'created']]);
      const listed = await mcp.call('list_creatives', { account });
      expect(bothVersionsErrors('creative/list-creatives-response.json', listed.body)).toEqual([]);
      expect(listed.body.creatives.map((c: any) => [c.creative_id, c.status])).toEqual([['hero_300x250', 'approved']]);

      const tag = await mcp.call('build_creative', {
        idempotency_key: 'preset-tag-00000000000001',
        account,
        creative_id: 'hero_300x250',
        target_format_id: hero.format_id,
        media_buy_id: 'mb_1',
        package_id: 'pkg_1',
      });
      await mcp.close();
      expect(bothVersionsErrors('media-buy/build-creative-response.json', tag.body)).toEqual([]);
      const assets = tag.body.creative_manifest.assets;
      expect(assets.serving_tag.content).toContain('https://cdn.acme.example/hero.png');
      expect(assets.impression_tracker.url).toStartWith(`${s.base}/creative-track/`);

      for (let i = 0; i < 2; i++) expect((await fetch(assets.impression_tracker.url)).status).toBe(200);
      const click = await fetch(assets.click_tracker.url, { redirect: 'manual' });
      expect([click.status, click.headers.get('location')]).toEqual([302, 'https://acme.example/landing']);

      const rest = restClient(s, key);
      const delivery = await rest.call('get_creative_delivery', { account, media_buy_ids: ['mb_1'] });
      expect(bothVersionsErrors('creative/get-creative-delivery-response.json', delivery.body)).toEqual([]);
      expect(delivery.body.creatives.map((c: any) => [c.creative_id, c.totals.impressions, c.totals.clicks])).toEqual([['hero_300x250', 2, 1]]);

      const usage = { account, creative_id: 'hero_300x250', impressions: 2, vendor_cost: 0.01, currency: 'USD' };
      const period = { start: '2026-03-01T00:00:00Z', end: '2026-03-31T23:59:59Z' };
      const reported = await rest.call('report_usage', { idempotency_key: 'preset-usage-000000000001', reporting_period: period, usage: [usage] });
      expect(bothVersionsErrors('account/report-usage-response.json', reported.body)).toEqual([]);
      expect(reported.body).toMatchObject({ accepted: 1 });

      // Another organization sees none of it.
      const theirs = restClient(s, other.key);
      expect((await theirs.call('list_creatives', {})).body.creatives).toEqual([]);
      expect((await theirs.call('get_creative_delivery', { media_buy_ids: ['mb_1'] })).body.creatives).toEqual([]);
      const refused = await theirs.call('report_usage', { idempotency_key: 'preset-usage-000000000002', reporting_period: period, usage: [usage] });
      expect(refused.body.accepted).toBe(0);
      expect(refused.body.errors.map((e: any) => e.field)).toEqual(['usage[0].account']);
    });

    test('MCP at /mcp, A2A card at the root, REST at /tasks, signing keys published', async () => {
      const { key } = await newKey(get().deployment);
      const mcp = await mcpClient(get(), key);
      const listed = await mcp.call('list_creative_formats', {});
      await mcp.close();
      expect(listed.body.formats).toHaveLength(80);
      const card = (await (await get().fetch('/.well-known/agent-card.json')).json()) as any;
      expect(card.skills.map((s: any) => s.id)).toEqual(expect.arrayContaining(['list_creative_formats', 'build_creative', 'preview_creative']));
      const rest = await get().fetch('/tasks/list_creative_formats', { method: 'POST', json: { type: 'dooh' } });
      expect(rest.status).toBe(200);
      expect(((await rest.json()) as any).formats).toHaveLength(4);
      const jwks = (await (await get().fetch('/.well-known/jwks.json')).json()) as any;
      expect(jwks.keys.length).toBeGreaterThan(0);
    });
  },
);
