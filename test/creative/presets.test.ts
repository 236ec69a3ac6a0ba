import { expect, test } from 'bun:test';
import testAgentPreset, { TEST_TOKEN } from '../../config/test-agent.ts';
import creativePreset from '../../config/creative-agent.ts';
import { forEachDatabase } from '../support/db.ts';
import { a2aClient, mcpClient, restClient } from '../support/agent.ts';
import { startServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { newKey } from '../support/principals.ts';
import { nativeManifest } from './fixture.ts';

// The creative library (seeded through the test controller) and the ad server's tasks too.
const CREATIVE_TOOLS = [
  'build_creative',
  'comply_test_controller',
  'get_adcp_capabilities',
  'get_creative_delivery',
  'get_creative_features',
  'get_task_status',
  'list_creative_formats',
  'list_creatives',
  'list_transformers',
  'preview_creative',
  'report_usage',
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

forEachDatabase(
  'creative agent preset',
  (adapter, schema) => startServer(adapter, schema, creativePreset.plugins.slice(1)),
  async (s) => s.close(),
  (get) => {
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
