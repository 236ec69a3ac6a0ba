import { expect, test } from 'bun:test';
import preset, { TEST_TOKEN } from '../../config/test-agent.ts';
import { forEachDatabase } from '../support/db.ts';
import { a2aClient, mcpClient, restClient } from '../support/agent.ts';
import { startServer } from '../support/server.ts';

// The preset's own plugin list, minus its storage entry (the test server adds an isolated one).
const plugins = preset.plugins.slice(1);

forEachDatabase(
  'test agent preset',
  (adapter, schema) => startServer(adapter, schema, plugins),
  async (s) => s.close(),
  (get) => {
    test('adagents.json lists the signals tenant, its endpoints and tools', async () => {
      const body = (await (await get().fetch('/.well-known/adagents.json')).json()) as any;
      const tenant = body.tenants.find((t: any) => t.id === 'signals');
      expect(tenant.mcp).toBe(`${get().base}/signals/mcp`);
      expect(tenant.tools.sort()).toEqual(['activate_signal', 'comply_test_controller', 'get_proto_capabilities', 'get_signals', 'get_task_status']);
      expect(body.authorized_agents[0].url).toBe(tenant.mcp);
    });

    test('/signals/mcp, /signals/a2a and /signals/tasks serve the signals tasks with the published test token', async () => {
      const mcp = await mcpClient(get(), TEST_TOKEN, '/signals/mcp');
      expect((await mcp.call('get_signals', { signal_spec: 'electric vehicle' })).body.signals[0].signal_agent_segment_id).toBe('sig_auto_intenders_ev');
      await mcp.close();
      const a2a = await a2aClient(get(), TEST_TOKEN, '/signals');
      expect((await a2a.call('get_signals', { signal_spec: 'electric vehicle' })).body.signals.length).toBeGreaterThan(0);
      const rest = restClient(get(), TEST_TOKEN, '/signals');
      expect((await rest.call('get_signals', { signal_spec: 'cruise' })).body.signals[0].signal_agent_segment_id).toBe('sig_travel_cruise_intenders');
      expect((await get().fetch('/mcp', { method: 'POST', json: {} })).status).toBe(404);
    });
  },
);
