import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { mcpClient } from '../support/agent.ts';
import { schemaErrors } from '../support/schemas.ts';
import { startSignalsServer, TOKEN } from './fixture.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

forEachDatabase(
  'namespace adcp',
  (adapter, schema) => startSignalsServer(adapter, schema, { env: { PROTOCOL_NAMESPACE: 'adcp' } }),
  async (s) => s.server.close(),
  (get) => {
    test('the capabilities task is get_adcp_capabilities and validates against the AdCP schema', async () => {
      const raw = new Client({ name: 'ns', version: '1' });
      await raw.connect(
        new StreamableHTTPClientTransport(new URL(get().server.base + '/mcp'), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }),
      );
      const names = (await raw.listTools()).tools.map((t) => t.name);
      await raw.close();
      expect(names).toContain('get_adcp_capabilities');
      expect(names).not.toContain('get_proto_capabilities');

      const client = await mcpClient(get().server, TOKEN);
      const { ok, body } = await client.call('get_adcp_capabilities', {});
      expect(ok).toBe(true);
      expect(schemaErrors('protocol/get-adcp-capabilities-response.json', body)).toEqual([]);
      expect(body.adcp.idempotency.supported).toBe(true);
      expect(body.supported_protocols).toEqual(['signals']);

      // Derived names follow the namespace: error member and key-value activation keys.
      const bad = await client.call('get_signals', {});
      expect(bad.body.adcp_error.code).toBe('INVALID_REQUEST');
      const act = await client.call('activate_signal', {
        signal_agent_segment_id: 'sig_b2b_hr_buyers',
        deployments: [{ type: 'agent', agent_url: 'https://sales.streamhaus.example/mcp' }],
        idempotency_key: 'ns-key-0000000000001',
      });
      await get().runDue();
      const done = await client.poll(act.body.task_id);
      await client.close();
      expect(done.result!.deployments[0].activation_key).toEqual({ type: 'key_value', key: 'adcp_signal', value: 'sig_b2b_hr_buyers' });
      const status = await (await get().server.fetch(`/tasks/${act.body.task_id}`, { token: TOKEN })).json();
      expect(schemaErrors('protocol/get-task-status-response.json', status)).toEqual([]);
    });
  },
);
