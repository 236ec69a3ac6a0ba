import { defaultIds } from '../../core/ports/ids.ts';
import { expect, test } from 'bun:test';
import testAgentPreset, { TEST_TOKEN } from '../../config/test-agent.ts';
import salesAgentPreset from '../../config/sales-agent.ts';
import { forEachDatabase } from '../support/db.ts';
import { a2aClient, mcpClient, restClient } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { createApiKey, createOrganization } from '../../plugins/auth/store.ts';
import { Database } from '../../core/ports/database.ts';
import { bothVersionsErrors } from '../support/schemas.ts';

const SALES_TOOLS = [
  // A seller that builds creatives: the creative protocol's tasks on the same path.
  'build_creative',
  'comply_test_controller',
  'create_media_buy',
  'get_account_financials',
  'get_creative_delivery',
  'get_creative_features',
  'get_media_buy_delivery',
  'get_media_buys',
  'get_products',
  'get_proto_capabilities',
  'get_task_status',
  'list_accounts',
  'list_creative_formats',
  'list_creatives',
  'list_transformers',
  'log_event',
  'preview_creative',
  'provide_performance_feedback',
  'report_usage',
  'sync_accounts',
  'sync_audiences',
  'sync_catalogs',
  'sync_creatives',
  'sync_event_sources',
  'sync_governance',
  'update_media_buy',
  'validate_input',
];

// The presets' own plugin lists, minus their storage entry (the test server adds an isolated one).
forEachDatabase<{ testAgent: TestServer; salesAgent: TestServer }>(
  'sales presets',
  async (adapter, schema) => ({
    testAgent: await startServer(adapter, `${schema}_t`, testAgentPreset.plugins.slice(1)),
    salesAgent: await startServer(adapter, `${schema}_s`, salesAgentPreset.plugins.slice(1), { env: { PROTOCOL_NAMESPACE: 'adcp' } }),
  }),
  async ({ testAgent, salesAgent }) => {
    await testAgent.close();
    await salesAgent.close();
  },
  (get) => {
    test('the test agent lists /sales with its tools in adagents.json', async () => {
      const { testAgent } = get();
      const body = (await (await testAgent.fetch('/.well-known/adagents.json')).json()) as any;
      const tenant = body.tenants.find((t: any) => t.id === 'sales');
      expect(tenant).toMatchObject({
        mcp: `${testAgent.base}/sales/mcp`,
        rest: `${testAgent.base}/sales/tasks/{name}`,
        a2a: `${testAgent.base}/sales/.well-known/agent-card.json`,
      });
      expect(tenant.tools.sort()).toEqual(SALES_TOOLS);
      expect(body.authorized_agents.map((a: any) => a.url)).toContain(tenant.mcp);
      // Each tenant serves only its own tools.
      expect(body.tenants.find((t: any) => t.id === 'signals').tools).not.toContain('get_products');
    });

    test('/sales/mcp, /sales/a2a and /sales/tasks serve sandbox sales with the published test token', async () => {
      const { testAgent } = get();
      const mcp = await mcpClient(testAgent, TEST_TOKEN, '/sales/mcp');
      const products = await mcp.call('get_products', { buying_mode: 'brief', brief: 'digital billboards in New York' });
      expect(products.body.products[0].product_id).toBe('dooh_times_square');
      expect(products.body.sandbox).toBe(true);
      await mcp.close();
      const a2a = await a2aClient(testAgent, TEST_TOKEN, '/sales');
      const synced = await a2a.call('sync_accounts', {
        idempotency_key: 'test-agent-accounts-01',
        accounts: [{ brand: { domain: 'demo.example' }, operator: 'demo.example', billing: 'operator' }],
      });
      expect(synced.body.accounts[0]).toMatchObject({ action: 'created', sandbox: true });
      const rest = restClient(testAgent, TEST_TOKEN, '/sales');
      expect((await rest.call('list_accounts', {})).body.accounts).toHaveLength(1);
      expect((await rest.call('get_signals', { signal_spec: 'cruise' })).ok).toBe(false);
    });

    test('the sales-agent preset serves every sales task at /mcp to organization API keys, capabilities valid in both versions', async () => {
      const { salesAgent } = get();
      const db = salesAgent.deployment.get(Database);
      const org = await createOrganization(db, defaultIds, { name: 'seller-buyer', tier: 'member' });
      const { key } = await createApiKey(db, defaultIds, { orgId: org.id, name: 'buyer' });
      const mcp = await mcpClient(salesAgent, key);
      const caps = await mcp.call('get_adcp_capabilities', {});
      expect(bothVersionsErrors('protocol/get-adcp-capabilities-response.json', caps.body)).toEqual([]);
      expect(caps.body.supported_protocols).toEqual(['media_buy']);
      const products = await mcp.call('get_products', { buying_mode: 'brief', brief: 'grocery shoppers' });
      expect(products.body.products[0].product_id).toBe('retail_sponsored_products');
      expect(products.body.sandbox).toBeUndefined();
      await mcp.close();
    });
  },
);
