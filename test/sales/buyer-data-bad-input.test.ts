import { beforeAll, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import testController from '../../plugins/test-controller/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { HOSTS, type TaskClient } from '../support/agent.ts';
import { HOUR, OTHER_TOKEN, startSalesWorld, type SalesWorld } from './fixture.ts';
import { sha256 } from './support/sha256.ts';

const TABLES = [
  'sales_audiences',
  'sales_audience_members',
  'sales_event_sources',
  'sales_events',
  'sales_performance_feedback',
  'sales_catalogs',
  'sales_catalog_items',
  'sales_media_buys',
  'adsim_conversions',
  'adsim_injected',
  'idempotency_keys',
  'tasks',
];

interface State {
  account: string;
  buy: string;
}

let n = 0;
const key = () => `buyer-bad-input-${String(++n).padStart(8, '0')}`;
const ok = { external_id: 'c-1', hashed_email: sha256('someone@example.com') };
const audience = (s: State, member: Record<string, unknown>) => ({
  idempotency_key: key(),
  account: { account_id: s.account },
  audiences: [{ audience_id: 'a', add: [member] }],
});
const period = { start: '2026-03-02T00:00:00Z', end: '2026-03-02T01:00:00Z' };
const event = (over: Record<string, unknown> = {}) => ({ event_id: 'e-1', event_type: 'purchase', event_time: '2026-03-02T00:30:00Z', ...over });

interface Case {
  name: string;
  task: string;
  args: (s: State) => Record<string, unknown>;
  code: string;
  field?: string;
  other?: boolean;
}

const CASES: Case[] = [
  // Plaintext personal data is refused wherever it appears.
  {
    name: 'plaintext email as hashed_email',
    task: 'sync_audiences',
    args: (s) => audience(s, { external_id: 'c-1', hashed_email: 'alice@example.com' }),
    code: 'INVALID_REQUEST',
    field: 'audiences[0].add[0].hashed_email',
  },
  {
    name: 'plaintext phone as hashed_phone',
    task: 'sync_audiences',
    args: (s) => audience(s, { external_id: 'c-1', hashed_phone: '+1 (555) 123-4567' }),
    code: 'INVALID_REQUEST',
    field: 'audiences[0].add[0].hashed_phone',
  },
  {
    name: 'upper-case digest',
    task: 'sync_audiences',
    args: (s) => audience(s, { external_id: 'c-1', hashed_email: sha256('x@y.example').toUpperCase() }),
    code: 'INVALID_REQUEST',
    field: 'audiences[0].add[0].hashed_email',
  },
  {
    name: 'email as external_id',
    task: 'sync_audiences',
    args: (s) => audience(s, { ...ok, external_id: 'bob@example.com' }),
    code: 'INVALID_REQUEST',
    field: 'audiences[0].add[0].external_id',
  },
  {
    name: 'phone in a uid value',
    task: 'sync_audiences',
    args: (s) => audience(s, { external_id: 'c-1', uids: [{ type: 'other', value: '+44 20 7946 0958' }] }),
    code: 'INVALID_REQUEST',
    field: 'audiences[0].add[0].uids[0].value',
  },
  {
    name: 'phone in an extra member field',
    task: 'sync_audiences',
    args: (s) => audience(s, { ...ok, phone: '4155550123' }),
    code: 'INVALID_REQUEST',
    field: 'audiences[0].add[0].phone',
  },
  {
    name: 'member without an identifier',
    task: 'sync_audiences',
    args: (s) => audience(s, { external_id: 'c-1' }),
    code: 'INVALID_REQUEST',
    field: 'audiences[0].add[0]',
  },
  {
    name: 'delete_missing without audiences',
    task: 'sync_audiences',
    args: (s) => ({ idempotency_key: key(), account: { account_id: s.account }, delete_missing: true }),
    code: 'INVALID_REQUEST',
    field: 'audiences',
  },
  {
    name: 'audiences of an unknown account',
    task: 'sync_audiences',
    args: () => ({ idempotency_key: key(), account: { account_id: 'acc_missing' }, audiences: [{ audience_id: 'a', add: [ok] }] }),
    code: 'ACCOUNT_NOT_FOUND',
    field: 'account',
  },
  {
    name: "audiences of another caller's account",
    task: 'sync_audiences',
    args: (s) => audience(s, ok),
    code: 'ACCOUNT_NOT_FOUND',
    field: 'account',
    other: true,
  },
  {
    name: 'sync_audiences without idempotency_key',
    task: 'sync_audiences',
    args: (s) => ({ account: { account_id: s.account }, audiences: [{ audience_id: 'a', add: [ok] }] }),
    code: 'INVALID_REQUEST',
    field: 'idempotency_key',
  },
  {
    name: 'unknown event type on a source',
    task: 'sync_event_sources',
    args: (s) => ({ idempotency_key: key(), account: { account_id: s.account }, event_sources: [{ event_source_id: 'w', event_types: ['purchased'] }] }),
    code: 'INVALID_REQUEST',
    field: 'event_sources[0].event_types[0]',
  },
  {
    name: 'events of an unknown source',
    task: 'log_event',
    args: () => ({ idempotency_key: key(), event_source_id: 'nowhere', events: [event()] }),
    code: 'REFERENCE_NOT_FOUND',
    field: 'event_source_id',
  },
  {
    name: 'plaintext email in user_match',
    task: 'log_event',
    args: () => ({ idempotency_key: key(), event_source_id: 'web', events: [event({ user_match: { hashed_email: 'carol@example.com' } })] }),
    code: 'INVALID_REQUEST',
    field: 'events[0].user_match.hashed_email',
  },
  {
    name: 'email hidden in a click id',
    task: 'log_event',
    args: () => ({ idempotency_key: key(), event_source_id: 'web', events: [event({ user_match: { click_id: 'dave@example.com' } })] }),
    code: 'INVALID_REQUEST',
    field: 'events[0].user_match.click_id',
  },
  {
    name: 'event time that is no timestamp',
    task: 'log_event',
    args: () => ({ idempotency_key: key(), event_source_id: 'web', events: [event({ event_time: 'yesterday' })] }),
    code: 'INVALID_REQUEST',
    field: 'events[0].event_time',
  },
  {
    name: 'no events',
    task: 'log_event',
    args: () => ({ idempotency_key: key(), event_source_id: 'web', events: [] }),
    code: 'INVALID_REQUEST',
    field: 'events',
  },
  {
    name: 'feedback on an unknown buy',
    task: 'provide_performance_feedback',
    args: () => ({ idempotency_key: key(), media_buy_id: 'mb_missing', measurement_period: period, performance_index: 1 }),
    code: 'MEDIA_BUY_NOT_FOUND',
    field: 'media_buy_id',
  },
  {
    name: "feedback on another caller's buy",
    task: 'provide_performance_feedback',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.buy, measurement_period: period, performance_index: 1 }),
    code: 'MEDIA_BUY_NOT_FOUND',
    field: 'media_buy_id',
    other: true,
  },
  {
    name: 'negative performance index',
    task: 'provide_performance_feedback',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.buy, measurement_period: period, performance_index: -1 }),
    code: 'INVALID_REQUEST',
    field: 'performance_index',
  },
  {
    name: 'period ending before it starts',
    task: 'provide_performance_feedback',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.buy, measurement_period: { start: period.end, end: period.start }, performance_index: 1 }),
    code: 'INVALID_REQUEST',
    field: 'measurement_period.end',
  },
  {
    name: 'period in the future',
    task: 'provide_performance_feedback',
    args: (s) => ({
      idempotency_key: key(),
      media_buy_id: s.buy,
      measurement_period: { start: '2027-01-01T00:00:00Z', end: '2027-01-02T00:00:00Z' },
      performance_index: 1,
    }),
    code: 'INVALID_REQUEST',
    field: 'measurement_period.start',
  },
  {
    name: 'feedback on an unknown package',
    task: 'provide_performance_feedback',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.buy, package_id: 'pkg_missing', measurement_period: period, performance_index: 1 }),
    code: 'PACKAGE_NOT_FOUND',
    field: 'package_id',
  },
  {
    name: 'feedback on an unknown creative',
    task: 'provide_performance_feedback',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.buy, creative_id: 'nope', measurement_period: period, performance_index: 1 }),
    code: 'CREATIVE_NOT_FOUND',
    field: 'creative_id',
  },
  {
    name: 'unknown metric type',
    task: 'provide_performance_feedback',
    args: (s) => ({ idempotency_key: key(), media_buy_id: s.buy, measurement_period: period, performance_index: 1, metric_type: 'vibes' }),
    code: 'INVALID_REQUEST',
    field: 'metric_type',
  },
  {
    name: 'catalog with both a feed and items',
    task: 'sync_catalogs',
    args: (s) => ({
      idempotency_key: key(),
      account: { account_id: s.account },
      catalogs: [{ catalog_id: 'c', type: 'product', url: 'https://feeds.example/p.json', items: [{ id: '1' }] }],
    }),
    code: 'INVALID_REQUEST',
    field: 'catalogs[0]',
  },
  {
    name: 'catalog of an unknown type',
    task: 'sync_catalogs',
    args: (s) => ({ idempotency_key: key(), account: { account_id: s.account }, catalogs: [{ catalog_id: 'c', type: 'cars', items: [{ id: '1' }] }] }),
    code: 'INVALID_REQUEST',
    field: 'catalogs[0].type',
  },
  {
    name: 'plain-http feed',
    task: 'sync_catalogs',
    args: (s) => ({
      idempotency_key: key(),
      account: { account_id: s.account },
      catalogs: [{ catalog_id: 'c', type: 'product', url: 'http://feeds.example/p.json' }],
    }),
    code: 'INVALID_REQUEST',
    field: 'catalogs[0].url',
  },
  {
    name: 'catalog without an id',
    task: 'sync_catalogs',
    args: (s) => ({ idempotency_key: key(), account: { account_id: s.account }, catalogs: [{ type: 'product', items: [{ id: '1' }] }] }),
    code: 'INVALID_REQUEST',
    field: 'catalogs[0].catalog_id',
  },
  {
    name: 'the same catalog twice',
    task: 'sync_catalogs',
    args: (s) => ({
      idempotency_key: key(),
      account: { account_id: s.account },
      catalogs: [
        { catalog_id: 'c', type: 'product', items: [{ id: '1' }] },
        { catalog_id: 'c', type: 'product', items: [{ id: '1' }] },
      ],
    }),
    code: 'INVALID_REQUEST',
    field: 'catalogs',
  },
  {
    name: 'delete_missing without catalogs',
    task: 'sync_catalogs',
    args: (s) => ({ idempotency_key: key(), account: { account_id: s.account }, delete_missing: true }),
    code: 'INVALID_REQUEST',
    field: 'catalogs',
  },
  {
    name: 'test controller naming a production account',
    task: 'comply_test_controller',
    args: (s) => ({ scenario: 'force_media_buy_status', account: { sandbox: false }, params: { media_buy_id: s.buy, status: 'active' } }),
    code: 'INVALID_REQUEST',
    field: 'account.sandbox',
  },
  {
    name: 'test controller status it does not force',
    task: 'comply_test_controller',
    args: (s) => ({ scenario: 'force_media_buy_status', account: { sandbox: true }, params: { media_buy_id: s.buy, status: 'rejected' } }),
    code: 'INVALID_REQUEST',
    field: 'params.status',
  },
];

forEachDatabase<SalesWorld & { state: State }>(
  'sales buyer data bad input',
  async (adapter, schema) => {
    const w = await startSalesWorld(adapter, schema, { extra: [testController({ enabled: true })], sales: { sandbox: true } });
    const c = await w.client('rest');
    const account = (
      await c.call('sync_accounts', { idempotency_key: key(), accounts: [{ brand: { domain: 'bad.example' }, operator: 'bad.example', billing: 'operator' }] })
    ).body.accounts[0].account_id as string;
    await c.call('sync_event_sources', { idempotency_key: key(), account: { account_id: account }, event_sources: [{ event_source_id: 'web' }] });
    const start = w.clock.now().getTime() + HOUR;
    const buy = (
      await c.call('create_media_buy', {
        idempotency_key: key(),
        account: { account_id: account },
        start_time: new Date(start).toISOString(),
        end_time: new Date(start + 24 * HOUR).toISOString(),
        packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000 }],
      })
    ).body.media_buy_id as string;
    return Object.assign(w, { state: { account, buy } });
  },
  (w) => w.close(),
  (get) => {
    const clients = new Map<string, TaskClient>();
    beforeAll(async () => {
      for (const host of HOSTS) {
        clients.set(host, await get().client(host));
        clients.set(`${host}:other`, await get().client(host, OTHER_TOKEN));
      }
    });

    test(`${CASES.length} bad inputs (plaintext PII included): the documented code and field on every host, and nothing written`, async () => {
      const db = get().seller.deployment.get(Database);
      const counts = async () =>
        Object.fromEntries(
          await Promise.all(TABLES.map(async (t) => [t, (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(t)}`))[0]!.n])),
        );
      const before = await counts();
      for (const host of HOSTS) {
        for (const c of CASES) {
          const { ok: success, body } = await clients.get(c.other ? `${host}:other` : host)!.call(c.task, c.args(get().state));
          expect({ host, case: c.name, ok: success, code: body.code, field: body.field }).toEqual({
            host,
            case: c.name,
            ok: false,
            code: c.code,
            field: c.field,
          });
          // Nothing of the refused value is echoed back.
          expect(JSON.stringify(body)).not.toContain('alice@example.com');
        }
      }
      expect(await counts()).toEqual(before);
    }, 120_000);
  },
);
