import { expect, test } from 'bun:test';
import testController from '../../plugins/test-controller/index.ts';
import governance from '../../plugins/governance/index.ts';
import signals from '../../plugins/signals/index.ts';
import { TaskStore } from '../../core/ports/tasks.ts';
import { forEachDatabase } from '../support/db.ts';
import { HOSTS, type TaskClient } from '../support/agent.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { HMAC_SECRET, HOUR, MIN, OTHER_TOKEN, startSalesWorld, type SalesWorld } from '../sales/fixture.ts';
import { REFERENCE_AGENT } from '../sales/support/reference-formats.ts';

let n = 0;
const key = (p: string) => `${p}-controller-${String(++n).padStart(8, '0')}`;
const valid = (body: unknown) => expect(bothVersionsErrors('compliance/comply-test-controller-response.json', body)).toEqual([]);
const spot = (id: string) => ({
  creative_id: id,
  name: id,
  format_id: { agent_url: REFERENCE_AGENT, id: 'video_ctv_preroll_30s' },
  assets: { video: { asset_type: 'video', url: `https://cdn.acme.example/${id}.mp4`, width: 1920, height: 1080, duration_ms: 30000 } },
});

/** A sandbox seller (sales, signals, governance) with the test controller on. */
forEachDatabase<SalesWorld>(
  'test controller',
  (adapter, schema) =>
    startSalesWorld(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      extra: [testController({ enabled: true }), governance(), signals({ activationDelaySeconds: 3600, agentUrl: 'https://signals.test.example/mcp' })],
    }),
  (w) => w.close(),
  (get) => {
    const control = (c: TaskClient, scenario: string, params?: Record<string, unknown>) =>
      c.call('comply_test_controller', { scenario, account: { sandbox: true }, ...(params ? { params } : {}) });
    const sandboxAccount = async (c: TaskClient, name: string, sandbox = true) =>
      (
        await c.call('sync_accounts', {
          idempotency_key: key('acc'),
          accounts: [{ brand: { domain: `${name}.example` }, operator: 'acme.example', billing: 'operator', sandbox }],
        })
      ).body.accounts[0].account_id as string;
    const buy = async (w: SalesWorld, c: TaskClient, account: string, extra: Record<string, unknown> = {}) => {
      const start = w.clock.now().getTime() + 24 * HOUR;
      const r = await c.call('create_media_buy', {
        idempotency_key: key('buy'),
        account: { account_id: account },
        start_time: new Date(start).toISOString(),
        end_time: new Date(start + 72 * HOUR).toISOString(),
        packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000, creatives: [spot(key('spot'))] }],
        ...extra,
      });
      return r.body;
    };

    for (const host of HOSTS) {
      test(`${host}: list_scenarios and a forced transition, answers valid; capabilities declare compliance_testing in both versions`, async () => {
        const w = get();
        const c = await w.client(host);
        const listed = await control(c, 'list_scenarios');
        valid(listed.body);
        expect(listed.body.scenarios).toEqual(
          expect.arrayContaining([
            'force_media_buy_status',
            'simulate_delivery',
            'simulate_impairment',
            'simulate_delayed_report',
            'force_signal_activation_status',
            'seed_plan',
            'seed_account',
          ]),
        );
        const b = await buy(w, c, await sandboxAccount(c, `${host}-list`));
        const forced = await control(c, 'force_media_buy_status', { media_buy_id: b.media_buy_id, status: 'active' });
        valid(forced.body);
        expect(forced.body).toMatchObject({ success: true, previous_state: 'pending_start', current_state: 'active' });
        const caps = await c.call('get_adcp_capabilities', {});
        expect(bothVersionsErrors('protocol/get-adcp-capabilities-response.json', caps.body)).toEqual([]);
        // 3.0.6 enumerates the scenarios it can name: only those are declared (a set: the sales plugins register theirs in assembly order).
        expect([...caps.body.compliance_testing.scenarios].sort()).toEqual([
          'force_account_status',
          'force_creative_status',
          'force_media_buy_status',
          'simulate_budget_spend',
          'simulate_delivery',
        ]);
        await c.close();
      });
    }

    test('a buy walked through its life without waiting: start webhook, injected delivery and spend, an impairment, a late report, completion and the final report', async () => {
      const w = get();
      const c = await w.client('mcp');
      const account = await sandboxAccount(c, 'walk');
      const b = await buy(w, c, account, {
        push_notification_config: { url: `${w.buyer.base}/webhooks/signed`, operation_id: 'walk-op' },
        reporting_webhook: {
          url: `${w.buyer.base}/webhooks/reports`,
          authentication: { schemes: ['HMAC-SHA256'], credentials: HMAC_SECRET },
          reporting_frequency: 'daily',
        },
      });
      const mine = () => w.events.filter((e) => e.payload.task_id === b.media_buy_id);

      expect((await control(c, 'force_media_buy_status', { media_buy_id: b.media_buy_id, status: 'active' })).body.current_state).toBe('active');
      await w.settle();
      expect(mine().map((e) => (e.payload.result as any).media_buy_status)).toEqual(['active']);

      const delivered = await control(c, 'simulate_delivery', {
        media_buy_id: b.media_buy_id,
        impressions: 10_000,
        clicks: 25,
        reported_spend: { amount: 420, currency: 'USD' },
        conversions: 3,
      });
      valid(delivered.body);
      expect(delivered.body.cumulative).toMatchObject({ impressions: 10_000, clicks: 25, spend: 420, conversions: 3 });
      await w.advance(MIN);
      const delivery = await c.call('get_media_buy_delivery', { media_buy_ids: [b.media_buy_id] });
      expect(bothVersionsErrors('media-buy/get-media-buy-delivery-response.json', delivery.body)).toEqual([]);
      expect(delivery.body.media_buy_deliveries[0].totals).toMatchObject({ impressions: 10_000, clicks: 25, spend: 420, conversions: 3 });
      const spent = await control(c, 'simulate_budget_spend', { media_buy_id: b.media_buy_id, spend_percentage: 50 });
      valid(spent.body);
      expect(spent.body).toMatchObject({ simulated: { computed_spend: 3000, budget: 6000 }, cumulative: { spend: 3000 } });

      // Brand safety does not wait for the coalescing window.
      const impaired = await control(c, 'simulate_impairment', {
        media_buy_id: b.media_buy_id,
        severity: 'brand_safety',
        resource_type: 'property',
        resource_id: 'news.example',
      });
      valid(impaired.body);
      expect(impaired.body.cumulative).toEqual({ health: 'impaired', open_impairments: 1 });
      await w.settle();
      const impairment = mine().find((e) => (e.payload.result as any).notification_type === 'impairment');
      expect(bothVersionsErrors('core/mcp-webhook-payload.json', impairment!.payload)).toEqual([]);
      expect((await c.call('get_media_buys', { media_buy_ids: [b.media_buy_id] })).body.media_buys[0]).toMatchObject({
        health: 'impaired',
        impairments: [{ resource_id: 'news.example' }],
      });

      const late = await control(c, 'simulate_delayed_report', { media_buy_id: b.media_buy_id });
      valid(late.body);
      await w.settle();
      const delayed = mine().filter((e) => e.endpoint === 'reports');
      expect(delayed.map((e) => [(e.payload.result as any).notification_type, (e.payload.result as any).sequence_number])).toEqual([
        ['delayed', late.body.simulated.sequence_number],
      ]);

      const completed = await control(c, 'force_media_buy_status', { media_buy_id: b.media_buy_id, status: 'completed' });
      expect(completed.body).toMatchObject({ previous_state: 'active', current_state: 'completed' });
      await w.advance(2 * HOUR);
      const final = mine()
        .filter((e) => e.endpoint === 'reports')
        .map((e) => e.payload.result as any);
      expect(final.at(-1)).toMatchObject({ notification_type: 'final' });
      expect(final.at(-1).media_buy_deliveries[0].totals.spend).toBeGreaterThanOrEqual(3000);
      // A completed buy does not come back.
      const back = await control(c, 'force_media_buy_status', { media_buy_id: b.media_buy_id, status: 'active' });
      valid(back.body);
      expect(back.body).toMatchObject({ success: false, error: 'INVALID_TRANSITION', current_state: 'completed' });
      await c.close();
    });

    test('only sandbox entities move; unknown ones are NOT_FOUND; unknown scenarios are refused; nothing is written', async () => {
      const w = get();
      const c = await w.client('rest');
      const real = await buy(w, c, await sandboxAccount(c, 'production', false));
      const forbidden = await control(c, 'force_media_buy_status', { media_buy_id: real.media_buy_id, status: 'active' });
      valid(forbidden.body);
      expect(forbidden.body).toMatchObject({ success: false, error: 'FORBIDDEN', current_state: 'pending_start' });
      expect((await c.call('get_media_buys', { media_buy_ids: [real.media_buy_id] })).body.media_buys[0].status).toBe('pending_start');
      const missing = await control(c, 'simulate_delivery', { media_buy_id: 'mb_missing', impressions: 1 });
      expect(missing.body).toMatchObject({ success: false, error: 'NOT_FOUND', current_state: null });
      const unknown = await control(c, 'force_weather');
      valid(unknown.body);
      expect(unknown.body).toMatchObject({ success: false, error: 'UNKNOWN_SCENARIO' });
    });

    test('3.0 requests carry no account: an unknown scenario is UNKNOWN_SCENARIO, a production account reference is refused', async () => {
      const c = await get().client('mcp');
      const bare = await c.call('comply_test_controller', { scenario: 'nonexistent_scenario', params: {} });
      expect(bare.body).toMatchObject({ success: false, error: 'UNKNOWN_SCENARIO' });
      const missing = await c.call('comply_test_controller', { scenario: 'force_media_buy_status', params: { media_buy_id: 'mb_none', status: 'active' } });
      expect(missing.body).toMatchObject({ success: false, error: 'NOT_FOUND' });
      const production = await c.call('comply_test_controller', { scenario: 'list_scenarios', account: { sandbox: false } });
      expect(production.body).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
      await c.close();
    });

    test('seed_account and force_account_status: a suspended sandbox account cannot buy', async () => {
      const w = get();
      const c = await w.client('a2a');
      valid(
        (await control(c, 'seed_account', { account_id: 'acc_fixture_1', fixture: { brand: { domain: 'fixture.example' }, operator: 'fixture.example' } }))
          .body,
      );
      const suspended = await control(c, 'force_account_status', { account_id: 'acc_fixture_1', status: 'suspended' });
      expect(suspended.body).toMatchObject({ success: true, previous_state: 'active', current_state: 'suspended' });
      const refused = await c.call('create_media_buy', {
        idempotency_key: key('buy'),
        account: { account_id: 'acc_fixture_1' },
        start_time: 'asap',
        end_time: new Date(w.clock.now().getTime() + 24 * HOUR).toISOString(),
        packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000 }],
      });
      expect(refused.body.code).toBe('ACCOUNT_SUSPENDED');
      expect((await control(c, 'seed_account', { account_id: 'acc_fixture_1' })).body).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
    });

    test('force_signal_activation_status: a pending activation is live at once and its task completes at the next worker run', async () => {
      const w = get();
      const c = await w.client('mcp');
      const started = await c.call('activate_signal', {
        idempotency_key: key('act'),
        signal_agent_segment_id: 'sig_auto_intenders_ev',
        destinations: [{ type: 'platform', platform: 'the-trade-desk' }],
      });
      expect(started.body.status).toBe('submitted');
      const forced = await control(c, 'force_signal_activation_status', { signal_agent_segment_id: 'sig_auto_intenders_ev', task_id: started.body.task_id });
      valid(forced.body);
      expect(forced.body).toMatchObject({ success: true, previous_state: 'pending', current_state: 'live' });
      await w.seller.deployment.get(TaskStore).runDue();
      const done = await c.poll(started.body.task_id);
      expect(done.status).toBe('completed');
      expect(done.result!.deployments[0].is_live).toBe(true);
      expect((await control(c, 'force_signal_activation_status', { signal_agent_segment_id: 'sig_auto_intenders_ev' })).body).toMatchObject({
        success: false,
        error: 'INVALID_STATE',
        current_state: 'live',
      });
    });

    test('force_get_signals_arm: the next get_signals answers submitted; force_task_completion completes it and pushes the result to its webhook', async () => {
      const w = get();
      const c = await w.client('mcp');
      valid((await control(c, 'force_get_signals_arm', { arm: 'submitted', task_id: 'task_signals_later' })).body);
      const submitted = await c.call('get_signals', {
        signal_spec: 'auto intenders',
        push_notification_config: { url: `${w.buyer.base}/webhooks/signed`, operation_id: 'signals-later' },
      });
      expect(submitted.body).toMatchObject({ status: 'submitted', task_id: 'task_signals_later', signals: [] });
      expect(bothVersionsErrors('signals/get-signals-response.json', submitted.body)).toEqual([]);
      expect((await c.call('get_signals', { signal_spec: 'auto intenders' })).body.signals.length).toBeGreaterThan(0);
      const result = { signals: [{ signal_agent_segment_id: 'sig_forced', name: 'Forced' }] };
      const completed = await control(c, 'force_task_completion', { task_id: 'task_signals_later', result });
      valid(completed.body);
      expect(completed.body).toMatchObject({ success: true, previous_state: 'submitted', current_state: 'completed' });
      await w.settle();
      const pushed = w.events.filter((e) => e.payload.task_id === 'task_signals_later' || e.payload.operation_id === 'signals-later');
      expect(pushed.map((e) => e.payload.status)).toContain('completed');
      expect(pushed.find((e) => e.payload.status === 'completed')!.payload.result).toMatchObject(result);
      await c.close();
    });

    test('force_creative_purge: a sandbox creative leaves the library with its assignments; unknown is NOT_FOUND; a production one FORBIDDEN', async () => {
      const w = get();
      const c = await w.client('mcp');
      const account = await sandboxAccount(c, 'purge');
      const synced = await c.call('sync_creatives', { idempotency_key: key('sync'), account: { account_id: account }, creatives: [spot('purge_me')] });
      expect(synced.ok).toBe(true);
      const purged = await control(c, 'force_creative_purge', { creative_id: 'purge_me', reason_detail: 'Rights expired' });
      valid(purged.body);
      expect(purged.body).toMatchObject({ success: true, current_state: 'purged' });
      const listed = await c.call('list_creatives', { account: { account_id: account }, filters: { creative_ids: ['purge_me'] } });
      expect(listed.body.creatives).toEqual([]);
      expect((await control(c, 'force_creative_purge', { creative_id: 'purge_me' })).body).toMatchObject({ success: false, error: 'NOT_FOUND' });
      const production = await sandboxAccount(c, 'purge-live', false);
      await c.call('sync_creatives', { idempotency_key: key('sync'), account: { account_id: production }, creatives: [spot('keep_me')] });
      expect((await control(c, 'force_creative_purge', { creative_id: 'keep_me' })).body).toMatchObject({ success: false, error: 'FORBIDDEN' });
      expect((await c.call('list_creatives', { account: { account_id: production }, filters: { creative_ids: ['keep_me'] } })).body.creatives).toHaveLength(1);
      await c.close();
    });

    test('force_upstream_unavailable: the named tool finds its upstream unreachable for that caller only (SERVICE_UNAVAILABLE, nothing written)', async () => {
      const w = get();
      const c = await w.client('mcp');
      const unknown = await control(c, 'force_upstream_unavailable', { tool: 'get_products' });
      valid(unknown.body);
      expect(unknown.body).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
      expect(unknown.body.error_detail).toContain('create_media_buy');
      const forced = await control(c, 'force_upstream_unavailable', { tool: 'create_media_buy' });
      valid(forced.body);
      expect(forced.body).toMatchObject({ success: true, previous_state: 'available', current_state: 'unavailable' });
      const account = await sandboxAccount(c, 'outage');
      const before = (await c.call('get_media_buys', { account: { account_id: account } })).body.media_buys.length;
      const refused = await c.call('create_media_buy', {
        idempotency_key: key('outage'),
        account: { account_id: account },
        start_time: 'asap',
        end_time: new Date(w.clock.now().getTime() + 48 * HOUR).toISOString(),
        packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000 }],
      });
      expect(refused.ok).toBe(false);
      expect(JSON.stringify(refused.body)).toContain('SERVICE_UNAVAILABLE');
      expect((await c.call('get_media_buys', { account: { account_id: account } })).body.media_buys.length).toBe(before);
      // Another caller still reaches the ad server; the wildcard cuts this caller off every upstream.
      const other = await w.client('mcp', OTHER_TOKEN);
      expect((await other.call('get_media_buy_delivery', {})).ok).toBe(true);
      await other.close();
      expect((await control(c, 'force_upstream_unavailable', { tool: '*' })).body.success).toBe(true);
      const activation = await c.call('activate_signal', {
        idempotency_key: key('act'),
        signal_agent_segment_id: 'sig_auto_intenders_ev',
        destinations: [{ type: 'platform', platform: 'the-trade-desk' }],
      });
      expect(JSON.stringify(activation.body)).toContain('SERVICE_UNAVAILABLE');
      await c.close();
    });

    test('seed_plan: a plan fixture check_governance then judges against', async () => {
      const c = await get().client('rest');
      const seeded = await control(c, 'seed_plan', {
        plan_id: 'fixture-plan',
        fixture: {
          brand: { domain: 'acme.example' },
          objectives: 'Fixture',
          budget: { total: 1000, currency: 'USD', reallocation_unlimited: true },
          flight: { start: '2026-03-01T00:00:00Z', end: '2026-04-01T00:00:00Z' },
        },
      });
      valid(seeded.body);
      expect(seeded.body.success).toBe(true);
      const check = await c.call('check_governance', {
        plan_id: 'fixture-plan',
        caller: 'https://seller.example',
        planned_delivery: { total_budget: 2000, currency: 'USD' },
      });
      expect(check.body.status).toBe('denied');
      const bad = await control(c, 'seed_plan', { plan_id: 'fixture-plan', fixture: { objectives: 'no budget' } });
      expect({ code: bad.body.code, field: bad.body.field, success: bad.body.success, error: bad.body.error }).toEqual({
        code: 'INVALID_REQUEST',
        field: 'params.fixture.brand',
        success: false,
        error: 'INVALID_PARAMS',
      });
    });
  },
);
