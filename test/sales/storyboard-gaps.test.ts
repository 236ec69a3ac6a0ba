import { join } from 'node:path';
import { expect, test } from 'bun:test';
import testController from '../../plugins/test-controller/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { HOUR, OTHER_TOKEN, startSalesWorld, type SalesWorld } from './fixture.ts';

let n = 0;
const key = (p: string) => `${p}-storyboard-${String(++n).padStart(8, '0')}`;
const natural = (brand: string) => ({ brand: { domain: brand }, operator: 'pinnacle-agency.example' });
const STARTER = { brand: { domain: 'acmeoutdoor.example' }, operator: 'pinnacle-agency.example' };

/**
 * Gaps the official storyboards found after the first conformance pass (issue 21): idempotency,
 * audience_sync, proposals, the test controller's forced create arm, pausing before the start.
 */
forEachDatabase<SalesWorld>(
  'sales storyboard gaps',
  (adapter, schema) =>
    startSalesWorld(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      sales: { sandbox: true, sandboxAccounts: [STARTER], sandboxLists: join(import.meta.dir, '../fixtures/sandbox-lists.json') },
      extra: [testController({ enabled: true })],
    }),
  (w) => w.close(),
  (get) => {
    const buy = (w: SalesWorld, account: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      idempotency_key: key('buy'),
      account,
      start_time: 'asap',
      end_time: new Date(w.clock.now().getTime() + 24 * HOUR).toISOString(),
      packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000 }],
      ...extra,
    });

    // Storyboard idempotency: the initial create's answer is filed under `idempotency_key`.
    test('create_media_buy echoes its idempotency_key, and its replay is the same answer', async () => {
      const w = get();
      const c = await w.client('mcp');
      const args = buy(w, natural('idem.example'));
      const created = await c.call('create_media_buy', args);
      expect(created.body.idempotency_key).toBe(args.idempotency_key);
      expect(bothVersionsErrors('media-buy/create-media-buy-response.json', created.body)).toEqual([]);
      const replay = await c.call('create_media_buy', { ...args, context: { correlation_id: 'retry' } });
      expect(replay.body).toMatchObject({ replayed: true, media_buy_id: created.body.media_buy_id, idempotency_key: args.idempotency_key });
      await c.close();
    });

    // Storyboard audience_sync: list_accounts first ("the account must already exist"), then sync_audiences.
    test('a sandbox caller with no account finds the starter account; one that declared its own sees only those', async () => {
      const w = get();
      const fresh = await w.client('rest', OTHER_TOKEN);
      const listed = await fresh.call('list_accounts', {});
      expect(listed.body.accounts).toHaveLength(1);
      expect(listed.body.accounts[0]).toMatchObject({ ...STARTER, status: 'active', sandbox: true });
      expect(bothVersionsErrors('account/list-accounts-response.json', listed.body)).toEqual([]);
      // Listing again provisions nothing more.
      expect((await fresh.call('list_accounts', {})).body.accounts).toHaveLength(1);
      await fresh.close();

      // This caller already has an account (the buy of the test above provisioned it).
      const other = await w.client('rest');
      const own = await other.call('list_accounts', {});
      expect(own.body.accounts.map((a: { brand: { domain: string } }) => a.brand.domain)).toEqual(['idem.example']);
      await other.close();
    });

    // Storyboards sales_proposal_mode and media_buy_seller/proposal_finalize.
    test('proposals: a brief drafts one, refine revises it, finalize commits it, create_media_buy executes only a committed one', async () => {
      const w = get();
      const c = await w.client('mcp');
      const account = natural('proposals.example');
      const brief = await c.call('get_products', {
        buying_mode: 'brief',
        brief: 'Premium video and display across sports. Q2 flight, adults 25-54',
        account,
      });
      expect(bothVersionsErrors('media-buy/get-products-response.json', brief.body)).toEqual([]);
      const [proposal] = brief.body.proposals;
      expect(proposal).toMatchObject({ proposal_id: 'balanced_reach_q2', proposal_status: 'draft' });
      const shares = proposal.allocations.map((a: { allocation_percentage: number }) => a.allocation_percentage);
      expect(shares.reduce((s: number, x: number) => s + x, 0)).toBe(100);
      const productIds = brief.body.products.map((p: { product_id: string }) => p.product_id);
      // Without an account a brief stays a pure read: no plan.
      expect((await c.call('get_products', { buying_mode: 'brief', brief: 'Premium video. Q2 flight' })).body.proposals).toBeUndefined();
      for (const a of proposal.allocations) expect(productIds).toContain(a.product_id);

      const buyIt = (extra: Record<string, unknown> = {}) =>
        c.call('create_media_buy', {
          idempotency_key: key('proposal-buy'),
          account,
          brand: { domain: 'proposals.example' },
          proposal_id: 'balanced_reach_q2',
          total_budget: { amount: 50000, currency: 'USD' },
          start_time: 'asap',
          end_time: new Date(w.clock.now().getTime() + 30 * 24 * HOUR).toISOString(),
          ...extra,
        });
      // A draft has indicative pricing only.
      expect((await buyIt()).body.code).toBe('PROPOSAL_NOT_COMMITTED');

      const refined = await c.call('get_products', {
        buying_mode: 'refine',
        refine: [
          { scope: 'proposal', proposal_id: 'balanced_reach_q2', ask: 'Shift 60% of budget to CTV.' },
          { scope: 'proposal', proposal_id: 'nope' },
        ],
        account,
      });
      expect(bothVersionsErrors('media-buy/get-products-response.json', refined.body)).toEqual([]);
      expect(refined.body.refinement_applied.map((r: { status: string }) => r.status)).toEqual(['applied', 'unable']);
      const ctv = refined.body.proposals[0].allocations.find((a: { product_id: string }) => a.product_id === 'ctv_sports_premium');
      expect(ctv.allocation_percentage).toBe(60);

      const finalized = await c.call('get_products', {
        buying_mode: 'refine',
        refine: [{ scope: 'proposal', proposal_id: 'balanced_reach_q2', action: 'finalize' }],
        account,
      });
      expect(bothVersionsErrors('media-buy/get-products-response.json', finalized.body)).toEqual([]);
      expect(finalized.body.proposals[0]).toMatchObject({
        proposal_status: 'committed',
        expires_at: new Date(w.clock.now().getTime() + 24 * HOUR).toISOString(),
      });

      const bought = await buyIt();
      expect(bought.ok).toBe(true);
      expect(bought.body.proposal_id).toBe('balanced_reach_q2');
      expect(bothVersionsErrors('media-buy/create-media-buy-response.json', bought.body)).toEqual([]);
      const budgets = Object.fromEntries(bought.body.packages.map((p: { product_id: string; budget: number }) => [p.product_id, p.budget]));
      expect(budgets.ctv_sports_premium).toBe(30000);
      expect(Object.values(budgets).reduce((s: number, x) => s + (x as number), 0)).toBe(50000);
      // Another caller has no such proposal.
      const stranger = await w.client('mcp', OTHER_TOKEN);
      const theirs = await stranger.call('get_products', {
        buying_mode: 'refine',
        refine: [{ scope: 'proposal', proposal_id: 'balanced_reach_q2', action: 'finalize' }],
        account,
      });
      expect(theirs.body.refinement_applied[0].status).toBe('unable');
      await stranger.close();
      // The hold lapses.
      await w.advance(25 * HOUR);
      expect((await buyIt()).body.code).toBe('PROPOSAL_EXPIRED');
      await c.close();
    });

    test('a buy paused before its start stays paused past the start time; resumed, it waits for its creatives again', async () => {
      const w = get();
      const c = await w.client('rest');
      const created = await c.call(
        'create_media_buy',
        buy(w, natural('hold.example'), { start_time: new Date(w.clock.now().getTime() + 2 * HOUR).toISOString() }),
      );
      expect(created.body.media_buy_status).toBe('pending_creatives');
      expect(created.body.valid_actions).toContain('pause');
      const id = created.body.media_buy_id;
      const paused = await c.call('update_media_buy', { idempotency_key: key('pause'), media_buy_id: id, paused: true });
      expect(paused.ok).toBe(true);
      // Schemas first: bun's toMatchObject writes asymmetric matchers into the received object.
      expect(bothVersionsErrors('media-buy/update-media-buy-response.json', paused.body)).toEqual([]);
      expect(paused.body).toMatchObject({ media_buy_status: 'paused', revision: 2, valid_actions: expect.arrayContaining(['resume', 'cancel']) });
      await w.advance(3 * HOUR);
      expect((await c.call('get_media_buys', { media_buy_ids: [id] })).body.media_buys[0].status).toBe('paused');
      const resumed = await c.call('update_media_buy', { idempotency_key: key('resume'), media_buy_id: id, paused: false });
      expect(resumed.body).toMatchObject({ media_buy_status: 'pending_creatives', revision: 3 });
      await c.close();
    });

    // Storyboard media_buy_seller/create_media_buy_async.
    test('force_create_media_buy_arm: the next create under that sandbox account answers submitted with the chosen task_id, pollable, then completes', async () => {
      const w = get();
      const c = await w.client('mcp');
      const account = { ...natural('forced.example'), sandbox: true };
      const forced = await c.call('comply_test_controller', {
        scenario: 'force_create_media_buy_arm',
        params: { arm: 'submitted', task_id: 'task_async_signed_io_q2', message: 'Awaiting IO signature' },
        account,
      });
      expect(forced.body).toMatchObject({ success: true, forced: { arm: 'submitted', task_id: 'task_async_signed_io_q2' } });
      expect(bothVersionsErrors('compliance/comply-test-controller-response.json', forced.body)).toEqual([]);
      const refused = await c.call('comply_test_controller', { scenario: 'force_create_media_buy_arm', params: { arm: 'input-required' }, account });
      expect(refused.body).toMatchObject({ success: false, error: 'INVALID_PARAMS' });

      const created = await c.call('create_media_buy', buy(w, account));
      expect(created.body).toMatchObject({ status: 'submitted', task_id: 'task_async_signed_io_q2', message: 'Awaiting IO signature' });
      expect(created.body.media_buy_id).toBeUndefined();
      expect(bothVersionsErrors('media-buy/create-media-buy-response.json', created.body)).toEqual([]);
      const polled = await c.call('get_task_status', { task_id: 'task_async_signed_io_q2' });
      expect(polled.body).toMatchObject({ task_id: 'task_async_signed_io_q2', task_type: 'create_media_buy' });
      // Another caller does not see it; the directive is consumed.
      const other = await w.client('mcp', OTHER_TOKEN);
      expect((await other.call('get_task_status', { task_id: 'task_async_signed_io_q2' })).body.code).toBe('REFERENCE_NOT_FOUND');
      await other.close();
      expect((await c.call('create_media_buy', buy(w, account))).body.media_buy_id).toBeDefined();
      // The seller's review confirms the buy.
      await w.advance(1000);
      const done = await c.call('get_task_status', { task_id: 'task_async_signed_io_q2' });
      expect(done.body.status).toBe('completed');
      expect(done.body.result.media_buy_id).toMatch(/^mb_/);
      await c.close();
    });

    test('force_get_products_arm: the next get_products under that account answers submitted; force_task_completion gives its result, once, to its caller only', async () => {
      const w = get();
      const c = await w.client('mcp');
      const account = { ...natural('forced-read.example'), sandbox: true };
      const control = (scenario: string, params: Record<string, unknown>) => c.call('comply_test_controller', { scenario, params, account });
      expect((await control('force_get_products_arm', { arm: 'submitted', task_id: 'task_products_later', message: 'Inventory review' })).body).toMatchObject({
        success: true,
        forced: { arm: 'submitted', task_id: 'task_products_later' },
      });
      const submitted = await c.call('get_products', { buying_mode: 'brief', brief: 'sports video', account });
      expect(submitted.body).toMatchObject({ status: 'submitted', task_id: 'task_products_later', message: 'Inventory review' });
      expect(bothVersionsErrors('media-buy/get-products-response.json', submitted.body)).toEqual([]);
      // Consumed: the next call answers at once.
      expect((await c.call('get_products', { buying_mode: 'brief', brief: 'sports video', account })).body.products.length).toBeGreaterThan(0);

      // A result missing what a get_products response needs is refused; nothing changes.
      expect((await control('force_task_completion', { task_id: 'task_products_later', result: { items: [] } })).body).toMatchObject({
        success: false,
        error: 'INVALID_PARAMS',
      });
      const other = await w.client('mcp', OTHER_TOKEN);
      expect(
        (
          await other.call('comply_test_controller', {
            scenario: 'force_task_completion',
            params: { task_id: 'task_products_later', result: { products: [] } },
          })
        ).body,
      ).toMatchObject({ success: false, error: 'NOT_FOUND' });
      await other.close();
      const result = { products: [], sandbox: true, note: 'kept as sent' };
      const completed = await control('force_task_completion', { task_id: 'task_products_later', result });
      expect(completed.body).toMatchObject({ success: true, previous_state: 'submitted', current_state: 'completed' });
      expect(bothVersionsErrors('compliance/comply-test-controller-response.json', completed.body)).toEqual([]);
      const polled = await c.call('get_task_status', { task_id: 'task_products_later' });
      expect(polled.body).toMatchObject({ status: 'completed', task_type: 'get_products', result: { ...result, status: 'completed' } });
      expect((await control('force_task_completion', { task_id: 'task_products_later', result })).body).toMatchObject({
        success: false,
        error: 'INVALID_STATE',
      });
      await c.close();
    });

    // Storyboard media_buy_seller/refine_products names a product of another seller's catalog.
    test('refine: an unknown product is unable in its slot, the other entries still apply', async () => {
      const w = get();
      const c = await w.client('rest');
      const refined = await c.call('get_products', {
        buying_mode: 'refine',
        refine: [
          { scope: 'request', ask: 'Only guaranteed packages' },
          { scope: 'product', product_id: 'sports_preroll_q2', ask: 'Increase budget allocation to $30K' },
        ],
      });
      expect(refined.ok).toBe(true);
      expect(bothVersionsErrors('media-buy/get-products-response.json', refined.body)).toEqual([]);
      expect(refined.body.products.length).toBeGreaterThan(0);
      expect(refined.body.refinement_applied.map((r: { status: string }) => r.status)).toEqual(['applied', 'unable']);
      expect(refined.body.refinement_applied[1].product_id).toBe('sports_preroll_q2');
      await c.close();
    });

    // Storyboard media_buy_seller/inventory_list_targeting.
    test('targeting_overlay list references (pinned sandbox lists) are kept with the package (tokens dropped), shown back, and replaced by update', async () => {
      const w = get();
      const c = await w.client('mcp');
      const ref = (list_id: string) => ({ agent_url: 'https://governance.pinnacle-agency.example', list_id });
      const created = await c.call(
        'create_media_buy',
        buy(w, natural('lists.example'), {
          packages: [
            {
              product_id: 'ctv_sports_premium',
              pricing_option_id: 'ctv_sports_cpm_fixed',
              budget: 6000,
              targeting_overlay: { property_list: { ...ref('allow_v1'), auth_token: 'list-token-0123456789' }, collection_list: ref('shows_v1') },
            },
          ],
        }),
      );
      expect(bothVersionsErrors('media-buy/create-media-buy-response.json', created.body)).toEqual([]);
      expect(created.body.packages[0].targeting_overlay).toEqual({ property_list: ref('allow_v1'), collection_list: ref('shows_v1') });
      const id = created.body.media_buy_id;
      const read = async () => {
        const listed = await c.call('get_media_buys', { media_buy_ids: [id] });
        expect(bothVersionsErrors('media-buy/get-media-buys-response.json', listed.body)).toEqual([]);
        return listed.body.media_buys[0].packages[0].targeting_overlay;
      };
      expect(await read()).toEqual({ property_list: ref('allow_v1'), collection_list: ref('shows_v1') });
      const updated = await c.call('update_media_buy', {
        idempotency_key: key('lists'),
        media_buy_id: id,
        packages: [{ package_id: created.body.packages[0].package_id, targeting_overlay: { property_list: ref('allow_v2') } }],
      });
      expect(updated.ok).toBe(true);
      expect(await read()).toEqual({ property_list: ref('allow_v2') });
      // A list naming none of the package's publishers is taken with a note: the package will deliver nothing.
      const nowhere = await c.call('update_media_buy', {
        idempotency_key: key('lists'),
        media_buy_id: id,
        packages: [{ package_id: created.body.packages[0].package_id, targeting_overlay: { property_list: ref('no_match_v1') } }],
      });
      expect(nowhere.ok).toBe(true);
      expect(nowhere.body.message).toContain('will deliver nothing');
      expect(bothVersionsErrors('media-buy/update-media-buy-response.json', nowhere.body)).toEqual([]);
      expect(await read()).toEqual({ property_list: ref('no_match_v1') });
      const bad = await c.call('update_media_buy', {
        idempotency_key: key('lists'),
        media_buy_id: id,
        packages: [{ package_id: created.body.packages[0].package_id, targeting_overlay: { property_list: { list_id: 'x' } } }],
      });
      expect(bad.body).toMatchObject({ code: 'INVALID_REQUEST', field: 'packages[0].targeting_overlay.property_list.agent_url' });
      await c.close();
    });

    test("seed_product writes only new ids or the caller's own fixtures, never the seller's catalog or another caller's", async () => {
      const w = get();
      const c = await w.client('mcp');
      const other = await w.client('mcp', OTHER_TOKEN);
      const seed = (client: typeof c, product_id: string) =>
        client.call('comply_test_controller', {
          scenario: 'seed_product',
          params: { product_id, fixture: { channels: ['display'] } },
          account: { sandbox: true },
        });
      expect((await seed(c, 'ctv_sports_premium')).body).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
      expect((await seed(c, 'gap_fixture_q2')).body.success).toBe(true);
      expect((await seed(c, 'gap_fixture_q2')).body.success).toBe(true);
      expect((await seed(other, 'gap_fixture_q2')).body).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
      const priced = await other.call('comply_test_controller', {
        scenario: 'seed_pricing_option',
        params: { product_id: 'gap_fixture_q2', pricing_option_id: 'cheap', fixture: { fixed_price: 0.01 } },
        account: { sandbox: true },
      });
      expect(priced.body).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
      // The seller's catalog is untouched.
      const products = await c.call('get_products', { buying_mode: 'refine', refine: [{ scope: 'product', product_id: 'ctv_sports_premium' }] });
      expect(products.body.products[0].channels).toEqual(['ctv']);
      await other.close();
      await c.close();
    });

    test('capabilities flag the audience and conversion features beside their blocks', async () => {
      const w = get();
      const c = await w.client('mcp');
      const caps = await c.call('get_adcp_capabilities', {});
      expect(caps.body.media_buy.features).toMatchObject({ audience_targeting: true, conversion_tracking: true });
      expect(caps.body.media_buy.audience_targeting).toBeDefined();
      expect(bothVersionsErrors('protocol/get-adcp-capabilities-response.json', caps.body)).toEqual([]);
      await c.close();
    });
  },
);
