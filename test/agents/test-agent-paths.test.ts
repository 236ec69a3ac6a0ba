import { expect, test } from 'bun:test';
import preset, { TEST_TOKEN, TENANTS } from '../../config/test-agent.ts';
import { forEachDatabase } from '../support/db.ts';
import { a2aClient, mcpClient, restClient } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';

const COMMON = ['get_adcp_capabilities', 'get_task_status'];
const CONTROL = ['comply_test_controller'];
/** The seller's tasks and test scenarios. */
const SELLER = [
  'create_media_buy',
  'get_account_financials',
  'get_media_buy_delivery',
  'get_media_buys',
  'get_products',
  'list_accounts',
  'list_creatives',
  'log_event',
  'provide_performance_feedback',
  'sync_accounts',
  'sync_audiences',
  'sync_governance',
  'sync_catalogs',
  'sync_creatives',
  'sync_event_sources',
  'update_media_buy',
];
const SELLER_SCENARIOS = [
  'force_media_buy_status',
  'force_account_status',
  'force_creative_status',
  'force_creative_purge',
  'seed_account',
  'seed_product',
  'seed_pricing_option',
  'seed_media_buy',
  'seed_creative',
  'simulate_impairment',
  'simulate_delayed_report',
  'simulate_delivery',
  'simulate_budget_spend',
  'force_invoice_status',
  'simulate_account_top_up',
  'force_create_media_buy_arm',
  'force_get_products_arm',
  'force_task_completion',
  'force_upstream_unavailable',
];
const CREATIVE = ['build_creative', 'list_creative_formats', 'preview_creative', 'list_transformers', 'validate_input', 'get_creative_features'];
/** The creative agent as an ad server over the deployment's creative library (served by the seller too). */
const AD_SERVER = ['get_creative_delivery', 'report_usage'];
/** The creative library, per account, and its accounts (both among the seller's tasks on /sales and /governance). */
const LIBRARY = ['list_creatives', 'sync_creatives', 'list_accounts', 'sync_accounts'];
const GOVERNANCE = ['check_governance', 'get_plan_audit_logs', 'report_plan_outcome', 'sync_plans'];
// Property and collection lists (plugins/governance-lists) on the same governance agent.
const LISTS = ['property_list', 'collection_list'].flatMap((n) => [`create_${n}`, `get_${n}`, `update_${n}`, `delete_${n}`, `list_${n}s`]);
// Content standards (plugins/governance-content) on the same governance agent.
const CONTENT = [
  'create_content_standards',
  'get_content_standards',
  'update_content_standards',
  'list_content_standards',
  'calibrate_content',
  'validate_content_delivery',
  'get_media_buy_artifacts',
];
/** What each path of the test agent serves, and nothing else. */
const TOOLS: Record<string, string[]> = {
  // A seller that builds creatives (storyboard creative_generative/seller): the creative tasks too.
  sales: [...COMMON, ...CONTROL, ...CREATIVE, ...AD_SERVER, ...SELLER],
  signals: [...COMMON, ...CONTROL, 'activate_signal', 'get_signals'],
  // The governance storyboards buy under their plans on the same URL: the seller's tasks too.
  governance: [...COMMON, ...CONTROL, ...GOVERNANCE, ...LISTS, 'validate_property_delivery', ...CONTENT, ...SELLER],
  creative: [...COMMON, ...CONTROL, ...CREATIVE, ...AD_SERVER, ...LIBRARY],
  'creative-builder': [...COMMON, ...CONTROL, ...CREATIVE, ...AD_SERVER, ...LIBRARY],
  brand: [
    ...COMMON,
    ...CONTROL,
    'get_brand_identity',
    'verify_brand_claim',
    'verify_brand_claims',
    'si_get_offering',
    'si_initiate_session',
    'si_send_message',
    'si_terminate_session',
    'list_si_sessions',
    'get_rights',
    'acquire_rights',
    'update_rights',
    'creative_approval',
    'search_brands',
  ],
};
/**
 * The creative paths: the creative library's scenarios (seeded creatives, forced review), seeded formats, the
 * deployment's products (creative storyboards require seller scenarios) and the library's accounts.
 */
const CREATIVE_SCENARIOS = [
  'seed_creative_format',
  'seed_creative',
  'force_creative_status',
  'force_creative_purge',
  'seed_product',
  'seed_pricing_option',
  'force_account_status',
  'seed_account',
  'force_task_completion',
  'force_upstream_unavailable',
];
const SCENARIOS: Record<string, string[]> = {
  // The seller also serves the creative tasks: formats seeded per account too.
  sales: [...SELLER_SCENARIOS, 'seed_creative_format'],
  signals: ['force_signal_activation_status', 'force_get_signals_arm', 'force_task_completion', 'force_upstream_unavailable'],
  governance: ['seed_plan', 'seed_media_buy_artifacts', ...SELLER_SCENARIOS],
  brand: ['force_session_status', 'force_task_completion', 'force_upstream_unavailable', 'force_rights_revoked'],
  creative: CREATIVE_SCENARIOS,
  'creative-builder': CREATIVE_SCENARIOS,
};

// The preset's own plugin list, minus its storage entry (the test server adds an isolated one).
forEachDatabase<TestServer>(
  'test agent paths',
  (adapter, schema) => startServer(adapter, schema, preset.plugins.slice(1), { env: { PROTOCOL_NAMESPACE: 'adcp' } }),
  (s) => s.close(),
  (get) => {
    test('every specialism has its path; each lists exactly its tasks over MCP, A2A and adagents.json', async () => {
      const s = get();
      expect(TENANTS.map((t) => t.id).sort()).toEqual(Object.keys(TOOLS).sort());
      const adagents = (await (await s.fetch('/.well-known/adagents.json')).json()) as any;
      for (const [id, tools] of Object.entries(TOOLS)) {
        const expected = [...tools].sort();
        const listed = await s.fetch(`/${id}/mcp`, {
          method: 'POST',
          headers: { accept: 'application/json', 'mcp-protocol-version': '2025-06-18' },
          json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        });
        expect({ id, mcp: ((await listed.json()) as any).result.tools.map((t: any) => t.name).sort() }).toEqual({ id, mcp: expected });
        const card = (await (await s.fetch(`/${id}/.well-known/agent-card.json`)).json()) as any;
        expect({ id, a2a: card.skills.map((k: any) => k.id).sort() }).toEqual({ id, a2a: expected });
        const tenant = adagents.tenants.find((t: any) => t.id === id);
        expect({ id, tools: tenant.tools.sort(), mcp: tenant.mcp }).toEqual({ id, tools: expected, mcp: `${s.base}/${id}/mcp` });
        // Another path's task is unknown here.
        const foreign = await restClient(s, TEST_TOKEN, `/${id}`).call(id === 'brand' ? 'get_products' : 'get_brand_identity', { brand_id: 'x' });
        expect({ id, code: foreign.body.code }).toEqual({ id, code: 'INVALID_REQUEST' });
      }
      expect(adagents.authorized_agents.map((a: any) => a.url)).toEqual(TENANTS.map((t) => `${s.base}/${t.id}/mcp`));
    });

    test('each path: capabilities of its specialism (valid in both versions) and the test scenarios of its specialism only', async () => {
      const s = get();
      const protocols: Record<string, string[]> = {
        sales: ['creative', 'media_buy'],
        signals: ['signals'],
        governance: ['governance', 'media_buy'],
        creative: ['creative'],
        'creative-builder': ['creative'],
        brand: ['brand', 'sponsored_intelligence'],
      };
      for (const id of Object.keys(TOOLS)) {
        const rest = restClient(s, TEST_TOKEN, `/${id}`);
        const caps = await rest.call('get_adcp_capabilities', {});
        expect(bothVersionsErrors('protocol/get-adcp-capabilities-response.json', caps.body)).toEqual([]);
        expect({ id, protocols: caps.body.supported_protocols }).toEqual({ id, protocols: protocols[id] });
        if (!SCENARIOS[id]) continue;
        const listed = await rest.call('comply_test_controller', { scenario: 'list_scenarios', account: { sandbox: true } });
        expect({ id, scenarios: listed.body.scenarios.sort() }).toEqual({ id, scenarios: [...SCENARIOS[id]!].sort() });
      }
    });

    test("another path's scenario: its params checked (INVALID_PARAMS), its entity not found here (NOT_FOUND); an unknown one UNKNOWN_SCENARIO", async () => {
      const rest = restClient(get(), TEST_TOKEN, '/signals');
      const call = (scenario: string, params: Record<string, unknown>) => rest.call('comply_test_controller', { scenario, params });
      expect((await call('force_creative_status', {})).body).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
      expect((await call('force_creative_status', { creative_id: 'nope', status: 'approved' })).body).toMatchObject({ success: false, error: 'NOT_FOUND' });
      expect((await call('force_weather', {})).body).toMatchObject({ success: false, error: 'UNKNOWN_SCENARIO' });
    });

    test('a buyer walks every flow with the published token: sandbox products, plan and governed buy, brand, signals, creative formats', async () => {
      const s = get();
      const sales = await mcpClient(s, TEST_TOKEN, '/sales/mcp');
      const products = await sales.call('get_products', { buying_mode: 'brief', brief: 'premium live sports on connected TV' });
      expect(products.body).toMatchObject({ sandbox: true });
      const product = products.body.products[0];
      const governance = restClient(s, TEST_TOKEN, '/governance');
      const plan = {
        plan_id: 'walk-plan',
        brand: { domain: 'acme-outdoor.example' },
        objectives: 'Walk',
        budget: { total: 8000, currency: 'USD', reallocation_unlimited: true },
        flight: { start: new Date(Date.now() - 86_400_000).toISOString(), end: new Date(Date.now() + 30 * 86_400_000).toISOString() },
        channels: { allowed: ['ctv'] },
      };
      expect((await governance.call('sync_plans', { idempotency_key: 'walk-plans-0000000001', plans: [plan] })).ok).toBe(true);
      const account = (
        await sales.call('sync_accounts', {
          idempotency_key: 'walk-accounts-000000001',
          accounts: [{ brand: { domain: 'acme-outdoor.example' }, operator: 'acme-outdoor.example', billing: 'operator' }],
        })
      ).body.accounts[0];
      const order = (k: string, budget: number) => ({
        idempotency_key: k,
        plan_id: 'walk-plan',
        account: { account_id: account.account_id },
        start_time: 'asap',
        end_time: new Date(Date.now() + 7 * 86_400_000).toISOString(),
        packages: [{ product_id: product.product_id, pricing_option_id: product.pricing_options[0].pricing_option_id, budget }],
      });
      const bought = await sales.call('create_media_buy', order('walk-buy-00000000000001', 6000));
      expect(bought.body).toMatchObject({ sandbox: true, governance: { plan_id: 'walk-plan', status: 'approved' } });
      const denied = await sales.call('create_media_buy', order('walk-buy-00000000000002', 6000));
      expect(denied.body.code).toBe('GOVERNANCE_DENIED');
      const forced = await sales.call('comply_test_controller', {
        scenario: 'force_media_buy_status',
        account: { sandbox: true },
        params: { media_buy_id: bought.body.media_buy_id, status: 'active' },
      });
      expect(forced.body).toMatchObject({ success: true, current_state: 'active' });
      await sales.close();

      const brand = await a2aClient(s, TEST_TOKEN, '/brand');
      const identity = await brand.call('get_brand_identity', { brand_id: 'acme_outdoor' });
      expect(bothVersionsErrors('brand/get-brand-identity-response.json', identity.body)).toEqual([]);
      expect(identity.body).toMatchObject({ names: [{ en: 'Acme Outdoor' }, { fr: 'Acme Plein Air' }], tagline: 'Gear for every trail' });
      const signals = restClient(s, TEST_TOKEN, '/signals');
      expect((await signals.call('get_signals', { signal_spec: 'electric vehicle' })).body.signals.length).toBeGreaterThan(0);
      const creative = restClient(s, TEST_TOKEN, '/creative');
      expect((await creative.call('list_creative_formats', { type: 'audio' })).body.formats.length).toBeGreaterThan(0);
    });
  },
);
