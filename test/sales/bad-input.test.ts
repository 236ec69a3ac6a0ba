import { beforeAll, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { HOSTS, type TaskClient } from '../support/agent.ts';
import { startSalesWorld, HOUR, MIN, OTHER_TOKEN, type SalesWorld } from './fixture.ts';
import { REFERENCE_AGENT } from './support/reference-formats.ts';

const TABLES = [
  'sales_accounts',
  'sales_media_buys',
  'sales_packages',
  'sales_buy_history',
  'sales_creatives',
  'sales_creative_assignments',
  'sales_impairments',
  'adsim_orders',
  'adsim_lines',
  'adsim_line_states',
  'webhook_outbox',
  'tasks',
  'idempotency_keys',
];

const video = (id: string, format = 'video_ctv_preroll_30s') => ({
  creative_id: id,
  name: id,
  format_id: { agent_url: REFERENCE_AGENT, id: format },
  assets: { video: { asset_type: 'video', url: `https://cdn.acme.example/${id}.mp4`, width: 1920, height: 1080, duration_ms: 30000 } },
});

interface Case {
  name: string;
  task: string;
  args: (s: State) => Record<string, unknown>;
  code: string;
  field?: string;
  other?: boolean;
}

interface State {
  account: string;
  pending: string;
  pendingPackage: string;
  active: string;
  activePackage: string;
  completed: string;
  completedPackage: string;
  canceled: string;
  base: (over?: Record<string, unknown>) => Record<string, unknown>;
}

let n = 0;
const key = () => `bad-input-key-${String(++n).padStart(8, '0')}`;
const pkg = (over: Record<string, unknown> = {}) => ({ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000, ...over });

const CASES: Case[] = [
  { name: 'wholesale mode', task: 'get_products', args: () => ({ buying_mode: 'wholesale' }), code: 'UNSUPPORTED_FEATURE', field: 'buying_mode' },
  { name: 'refine mode without refine[]', task: 'get_products', args: () => ({ buying_mode: 'refine' }), code: 'INVALID_REQUEST', field: 'refine' },
  {
    name: 'bare-string format filter',
    task: 'get_products',
    args: () => ({ buying_mode: 'brief', filters: { format_ids: ['video_standard_30s'] } }),
    code: 'INVALID_FORMAT_ID',
    field: 'filters.format_ids[0]',
  },
  {
    name: 'forged cursor',
    task: 'get_products',
    args: () => ({ buying_mode: 'brief', pagination: { cursor: 'eyJub3QiOiJtaW5lIn0' } }),
    code: 'INVALID_REQUEST',
    field: 'pagination.cursor',
  },
  {
    name: 'unknown channel',
    task: 'get_products',
    args: () => ({ buying_mode: 'brief', filters: { channels: ['tv'] } }),
    code: 'INVALID_REQUEST',
    field: 'filters.channels[0]',
  },
  {
    name: 'sync_accounts without idempotency_key',
    task: 'sync_accounts',
    args: () => ({ accounts: [{ brand: { domain: 'x.example' }, operator: 'x.example', billing: 'operator' }] }),
    code: 'INVALID_REQUEST',
    field: 'idempotency_key',
  },
  { name: 'no accounts', task: 'sync_accounts', args: () => ({ idempotency_key: key(), accounts: [] }), code: 'INVALID_REQUEST', field: 'accounts' },
  {
    name: 'unknown billing party',
    task: 'sync_accounts',
    args: () => ({ idempotency_key: key(), accounts: [{ brand: { domain: 'x.example' }, operator: 'x.example', billing: 'nobody' }] }),
    code: 'INVALID_REQUEST',
    field: 'accounts[0].billing',
  },
  {
    name: 'brand that is no domain',
    task: 'sync_accounts',
    args: () => ({ idempotency_key: key(), accounts: [{ brand: { domain: 'Not A Domain' }, operator: 'x.example', billing: 'operator' }] }),
    code: 'INVALID_REQUEST',
    field: 'accounts[0].brand.domain',
  },
  {
    name: 'unknown account',
    task: 'create_media_buy',
    args: (s) => s.base({ account: { account_id: 'acc_missing' } }),
    code: 'ACCOUNT_NOT_FOUND',
    field: 'account',
  },
  { name: "another caller's account", task: 'create_media_buy', args: (s) => s.base(), code: 'ACCOUNT_NOT_FOUND', field: 'account', other: true },
  {
    name: 'unknown product',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg({ product_id: 'nope' })] }),
    code: 'PRODUCT_NOT_FOUND',
    field: 'packages[0].product_id',
  },
  {
    name: 'pricing option of another product',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg({ pricing_option_id: 'olv_news_cpm_fixed' })] }),
    code: 'INVALID_REQUEST',
    field: 'packages[0].pricing_option_id',
  },
  {
    name: 'budget below the minimum spend',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg({ budget: 4999 })] }),
    code: 'BUDGET_TOO_LOW',
    field: 'packages[0].budget',
  },
  {
    name: 'negative budget',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg({ budget: -1 })] }),
    code: 'INVALID_REQUEST',
    field: 'packages[0].budget',
  },
  {
    name: 'end before start',
    task: 'create_media_buy',
    args: (s) => s.base({ end_time: '2026-03-01T00:00:00Z', start_time: 'asap' }),
    code: 'INVALID_REQUEST',
    field: 'end_time',
  },
  {
    name: 'start in the past',
    task: 'create_media_buy',
    args: (s) => s.base({ start_time: '2026-01-01T00:00:00Z' }),
    code: 'INVALID_REQUEST',
    field: 'start_time',
  },
  { name: 'start_time not a time', task: 'create_media_buy', args: (s) => s.base({ start_time: 'tomorrow' }), code: 'INVALID_REQUEST', field: 'start_time' },
  { name: 'no packages', task: 'create_media_buy', args: (s) => s.base({ packages: [] }), code: 'INVALID_REQUEST', field: 'packages' },
  {
    name: 'bare-string package format',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg({ format_ids: ['video_ctv_preroll_30s'] })] }),
    code: 'INVALID_FORMAT_ID',
    field: 'packages[0].format_ids[0]',
  },
  {
    name: 'format the product does not take',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg({ format_ids: [{ agent_url: REFERENCE_AGENT, id: 'display_300x250_image' }] })] }),
    code: 'FORMAT_NOT_SUPPORTED',
    field: 'packages[0].format_ids[0]',
  },
  {
    name: 'creative format unknown to its creative agent',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg({ creatives: [video('c1', 'video_made_up')] })] }),
    code: 'INVALID_FORMAT_ID',
    field: 'packages[0].creatives[0].format_id',
  },
  {
    name: 'creative asset with a javascript: URL',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg({ creatives: [{ ...video('c2'), assets: { video: { asset_type: 'video', url: 'javascript:alert(1)' } } }] })] }),
    code: 'INVALID_REQUEST',
    field: 'packages[0].creatives[0].assets.video.url',
  },
  {
    name: 'auction without a bid',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg({ product_id: 'ctv_entertainment_ros', pricing_option_id: 'ctv_ent_cpm_auction' })] }),
    code: 'INVALID_REQUEST',
    field: 'packages[0].bid_price',
  },
  {
    name: 'bid under the floor',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg({ product_id: 'ctv_entertainment_ros', pricing_option_id: 'ctv_ent_cpm_auction', bid_price: 10 })] }),
    code: 'INVALID_REQUEST',
    field: 'packages[0].bid_price',
  },
  {
    name: 'two currencies in one buy',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg(), pkg({ product_id: 'olv_news_preroll', pricing_option_id: 'olv_news_cpm_eur', budget: 1000 })] }),
    code: 'INVALID_REQUEST',
    field: 'packages[1].pricing_option_id',
  },
  {
    name: 'short HMAC secret on reporting_webhook',
    task: 'create_media_buy',
    args: (s) =>
      s.base({
        reporting_webhook: { url: 'https://buyer.example/r', authentication: { schemes: ['HMAC-SHA256'], credentials: 'short' }, reporting_frequency: 'daily' },
      }),
    code: 'INVALID_REQUEST',
    field: 'reporting_webhook.authentication.credentials',
  },
  { name: 'packages beside a proposal', task: 'create_media_buy', args: (s) => s.base({ proposal_id: 'prop_1' }), code: 'INVALID_REQUEST', field: 'packages' },
  {
    name: 'proposal without total_budget',
    task: 'create_media_buy',
    args: (s) => s.base({ proposal_id: 'prop_1', packages: undefined }),
    code: 'INVALID_REQUEST',
    field: 'total_budget',
  },
  {
    name: 'unknown proposal',
    task: 'create_media_buy',
    args: (s) => s.base({ proposal_id: 'prop_1', packages: undefined, total_budget: { amount: 10000, currency: 'USD' } }),
    code: 'REFERENCE_NOT_FOUND',
    field: 'proposal_id',
  },
  {
    name: 'finalize mixed with a refinement',
    task: 'get_products',
    args: () => ({
      buying_mode: 'refine',
      refine: [
        { scope: 'proposal', proposal_id: 'prop_1', action: 'finalize' },
        { scope: 'request', ask: 'more video' },
      ],
    }),
    code: 'INVALID_REQUEST',
    field: 'refine',
  },
  {
    name: 'push URL that is not http(s)',
    task: 'create_media_buy',
    args: (s) => s.base({ push_notification_config: { url: 'ftp://buyer.example/h', operation_id: 'op' } }),
    code: 'INVALID_REQUEST',
    field: 'push_notification_config.url',
  },
  {
    name: 'assignment of an unknown creative',
    task: 'create_media_buy',
    args: (s) => s.base({ packages: [pkg({ creative_assignments: [{ creative_id: 'not_in_library' }] })] }),
    code: 'CREATIVE_NOT_FOUND',
    field: 'packages[0].creative_assignments[0].creative_id',
  },
  {
    name: 'unknown media buy',
    task: 'update_media_buy',
    args: () => ({ idempotency_key: key(), media_buy_id: 'mb_missing', paused: true }),
    code: 'MEDIA_BUY_NOT_FOUND',
    field: 'media_buy_id',
  },
  {
    name: "another caller's media buy",
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.active, paused: true }),
    code: 'MEDIA_BUY_NOT_FOUND',
    field: 'media_buy_id',
    other: true,
  },
  {
    name: 'unknown package',
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.pending, packages: [{ package_id: 'pkg_missing', budget: 7000 }] }),
    code: 'PACKAGE_NOT_FOUND',
    field: 'packages[0].package_id',
  },
  {
    name: 'stale revision',
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.pending, revision: 99, end_time: '2026-06-01T00:00:00Z' }),
    code: 'CONFLICT',
    field: 'revision',
  },
  {
    // A budget first: the delivery is asked behind the lock, then the revision refuses.
    name: 'stale revision with a budget change',
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.pending, revision: 99, packages: [{ package_id: s.pendingPackage, budget: 7000 }] }),
    code: 'CONFLICT',
    field: 'revision',
  },
  {
    name: "another caller's media buy, a budget change",
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.active, packages: [{ package_id: s.pendingPackage, budget: 7000 }] }),
    code: 'MEDIA_BUY_NOT_FOUND',
    field: 'media_buy_id',
    other: true,
  },
  {
    name: 'nothing to change',
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.pending }),
    code: 'INVALID_REQUEST',
    field: 'media_buy_id',
  },
  {
    name: 'un-cancel',
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.pending, canceled: false }),
    code: 'INVALID_REQUEST',
    field: 'canceled',
  },
  {
    name: 'budget under the minimum',
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.pending, packages: [{ package_id: s.pendingPackage, budget: 10 }] }),
    code: 'BUDGET_TOO_LOW',
    field: 'packages[0].budget',
  },
  {
    name: 'assign to an unknown package',
    task: 'sync_creatives',
    args: (s) => ({
      idempotency_key: key(),
      account: { account_id: s.account },
      creatives: [video('c3')],
      assignments: [{ creative_id: 'c3', package_id: 'pkg_missing' }],
    }),
    code: 'PACKAGE_NOT_FOUND',
    field: 'assignments[0].package_id',
  },
  {
    name: 'bare-string creative format',
    task: 'sync_creatives',
    args: (s) => ({ idempotency_key: key(), account: { account_id: s.account }, creatives: [{ ...video('c4'), format_id: 'video_standard_30s' }] }),
    code: 'INVALID_FORMAT_ID',
    field: 'creatives[0].format_id',
  },
  {
    name: 'creative of the wrong format for the package',
    task: 'sync_creatives',
    args: (s) => ({
      idempotency_key: key(),
      account: { account_id: s.account },
      creatives: [video('c5', 'video_standard_30s')],
      assignments: [{ creative_id: 'c5', package_id: s.pendingPackage }],
    }),
    code: 'FORMAT_NOT_SUPPORTED',
    field: 'assignments[0].creative_id',
  },
  {
    name: 'delivery of an unknown buy',
    task: 'get_media_buy_delivery',
    args: () => ({ media_buy_ids: ['mb_missing'] }),
    code: 'MEDIA_BUY_NOT_FOUND',
    field: 'media_buy_ids',
  },
  {
    name: 'delivery dates reversed',
    task: 'get_media_buy_delivery',
    args: () => ({ start_date: '2026-03-05', end_date: '2026-03-01' }),
    code: 'INVALID_REQUEST',
    field: 'end_date',
  },
  { name: 'history depth below zero', task: 'get_media_buys', args: () => ({ include_history: -1 }), code: 'INVALID_REQUEST', field: 'include_history' },
  { name: 'page size zero', task: 'list_accounts', args: () => ({ pagination: { max_results: 0 } }), code: 'INVALID_REQUEST', field: 'pagination.max_results' },
  // Illegal transitions.
  {
    name: 'resume a buy that never started',
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.pending, paused: false }),
    code: 'INVALID_STATE',
    field: 'paused',
  },
  {
    name: 'move the start of a running buy',
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.active, start_time: '2026-04-01T00:00:00Z' }),
    code: 'INVALID_STATE',
    field: 'start_time',
  },
  {
    name: 'change a completed buy',
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.completed, end_time: '2026-05-01T00:00:00Z' }),
    code: 'INVALID_STATE',
    field: 'media_buy_id',
  },
  {
    name: 'cancel a canceled buy',
    task: 'update_media_buy',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.canceled, canceled: true }),
    code: 'NOT_CANCELLABLE',
    field: 'media_buy_id',
  },
  {
    name: 'creatives for a completed buy',
    task: 'sync_creatives',
    args: (s) => ({
      idempotency_key: key(),
      account: { account_id: s.account },
      creatives: [video('c6')],
      assignments: [{ creative_id: 'c6', package_id: s.completedPackage }],
    }),
    code: 'INVALID_STATE',
    field: 'assignments',
  },
];

forEachDatabase<SalesWorld & { state: State }>(
  'sales bad input',
  async (adapter, schema) => {
    const w = await startSalesWorld(adapter, schema);
    const c = await w.client('rest');
    const synced = await c.call('sync_accounts', {
      idempotency_key: key(),
      accounts: [{ brand: { domain: 'acme.example' }, operator: 'acme.example', billing: 'operator' }],
    });
    const account = synced.body.accounts[0].account_id as string;
    const base = (over: Record<string, unknown> = {}) => ({
      idempotency_key: key(),
      account: { account_id: account },
      start_time: new Date(w.clock.now().getTime() + HOUR).toISOString(),
      end_time: new Date(w.clock.now().getTime() + 48 * HOUR).toISOString(),
      packages: [pkg()],
      ...over,
    });
    const make = async (over: Record<string, unknown>) => {
      const r = await c.call('create_media_buy', base(over));
      if (!r.ok) throw new Error(JSON.stringify(r.body));
      return r.body as { media_buy_id: string; packages: Array<{ package_id: string }> };
    };
    const pending = await make({});
    const active = await make({ start_time: 'asap', packages: [pkg({ creatives: [video('a1')] })] });
    const completed = await make({
      start_time: 'asap',
      end_time: new Date(w.clock.now().getTime() + 2 * HOUR).toISOString(),
      packages: [pkg({ creatives: [video('a2')] })],
    });
    const canceled = await make({});
    await c.call('update_media_buy', { idempotency_key: key(), media_buy_id: canceled.media_buy_id, canceled: true });
    await w.advance(3 * HOUR);
    // `active` runs for 48 hours: still active now.
    return {
      ...w,
      state: {
        account,
        pending: pending.media_buy_id,
        pendingPackage: pending.packages[0]!.package_id,
        active: active.media_buy_id,
        activePackage: active.packages[0]!.package_id,
        completed: completed.media_buy_id,
        completedPackage: completed.packages[0]!.package_id,
        canceled: canceled.media_buy_id,
        base,
      },
    };
  },
  (w) => w.close(),
  (get) => {
    const counts = async () => {
      const db = get().seller.deployment.get(Database);
      const out: Record<string, number> = {};
      for (const t of TABLES) out[t] = (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(t)}`))[0]!.n;
      return out;
    };
    const clients = new Map<string, TaskClient>();
    beforeAll(async () => {
      for (const host of HOSTS) {
        clients.set(host, await get().client(host));
        clients.set(`${host}:other`, await get().client(host, OTHER_TOKEN));
      }
    });

    test(`${CASES.length} bad inputs and illegal transitions: the documented code, the field, and nothing written (every host)`, async () => {
      expect(CASES.length).toBeGreaterThanOrEqual(25);
      const s = get().state;
      const statuses = await get()
        .client('rest')
        .then((c) => c.call('get_media_buys', { media_buy_ids: [s.pending, s.active, s.completed, s.canceled] }));
      expect(statuses.body.media_buys.map((b: any) => b.status).sort()).toEqual(['active', 'canceled', 'completed', 'pending_creatives']);
      const before = await counts();
      for (const host of HOSTS) {
        for (const c of CASES) {
          const client = clients.get(c.other ? `${host}:other` : host)!;
          const { ok, body } = await client.call(c.task, c.args(s));
          const code = body.code ?? body.errors?.[0]?.code;
          const field = body.field ?? body.errors?.[0]?.field;
          expect({ host, case: c.name, ok, code, field: c.field === undefined ? undefined : field }).toEqual({
            host,
            case: c.name,
            ok: false,
            code: c.code,
            field: c.field,
          });
        }
      }
      expect(await counts()).toEqual(before);
    }, 120_000);

    test('the state of the buys did not move', async () => {
      const s = get().state;
      const c = await get().client('mcp');
      const { body } = await c.call('get_media_buys', { media_buy_ids: [s.pending, s.active] });
      expect(body.media_buys.map((b: any) => [b.status, b.revision])).toEqual([
        ['pending_creatives', 1],
        ['active', 2],
      ]);
      await get().advance(MIN);
    });
  },
);
