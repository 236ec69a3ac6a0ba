import { expect, test } from 'bun:test';
import testController from '../../plugins/test-controller/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { HOUR, OTHER_TOKEN, startSalesWorld, type SalesWorld } from './fixture.ts';

let n = 0;
const key = (p: string) => `${p}-financials-${String(++n).padStart(8, '0')}`;

/** get_account_financials: an operator-billed account's spend, summed from its buys' delivery, per period. */
forEachDatabase<SalesWorld>(
  'account financials',
  (adapter, schema) =>
    startSalesWorld(adapter, schema, { env: { PROTOCOL_NAMESPACE: 'adcp' }, sales: { sandbox: true }, extra: [testController({ enabled: true })] }),
  (w) => w.close(),
  (get) => {
    test('spend of the period from delivery, buys that ran, payment terms; valid in both versions; other callers and bad periods refused', async () => {
      const w = get();
      const c = await w.client('mcp');
      const synced = await c.call('sync_accounts', {
        idempotency_key: key('acc'),
        accounts: [
          { brand: { domain: 'fin.example' }, operator: 'agency.example', billing: 'operator', payment_terms: 'net_30' },
          { brand: { domain: 'fin-advertiser.example' }, operator: 'agency.example', billing: 'advertiser' },
        ],
      });
      const [accountId, advertiserBilled] = synced.body.accounts.map((a: { account_id: string }) => a.account_id);
      const account = { account_id: accountId };
      const empty = await c.call('get_account_financials', { account });
      expect(bothVersionsErrors('account/get-account-financials-response.json', empty.body)).toEqual([]);
      expect(empty.body).toMatchObject({
        account,
        currency: 'USD',
        timezone: 'UTC',
        spend: { total_spend: 0, media_buy_count: 0 },
        payment_terms: 'net_30',
        payment_status: 'current',
      });
      expect(empty.body.period).toEqual({ start: '2026-03-01', end: '2026-03-31' });

      const bought = await c.call('create_media_buy', {
        idempotency_key: key('buy'),
        account,
        start_time: 'asap',
        end_time: new Date(w.clock.now().getTime() + 10 * 24 * HOUR).toISOString(),
        packages: [{ product_id: 'gaming_rewarded_video', pricing_option_id: 'gaming_rewarded_cpm', budget: 5000 }],
      });
      expect(bought.ok).toBe(true);
      await c.call('comply_test_controller', {
        scenario: 'force_media_buy_status',
        params: { media_buy_id: bought.body.media_buy_id, status: 'active' },
        account: { sandbox: true },
      });
      await w.advance(72 * HOUR);
      const delivery = await c.call('get_media_buy_delivery', { media_buy_ids: [bought.body.media_buy_id], start_date: '2026-03-01', end_date: '2026-03-31' });
      const spent = delivery.body.media_buy_deliveries[0].totals.spend as number;
      expect(spent).toBeGreaterThan(0);
      const fin = await c.call('get_account_financials', { account, period: { start: '2026-03-01', end: '2026-03-31' }, context: { trace: 'fin' } });
      expect(bothVersionsErrors('account/get-account-financials-response.json', fin.body)).toEqual([]);
      expect(fin.body.spend.media_buy_count).toBe(1);
      expect(fin.body.spend.total_spend).toBeCloseTo(spent, 2);
      expect(fin.body.context).toEqual({ trace: 'fin' });
      // A period before the buy: nothing spent.
      const before = await c.call('get_account_financials', { account, period: { start: '2026-01-01', end: '2026-01-31' } });
      expect(before.body.spend).toEqual({ total_spend: 0, media_buy_count: 0 });

      const reversed = await c.call('get_account_financials', { account, period: { start: '2026-03-31', end: '2026-03-01' } });
      expect(reversed.ok).toBe(false);
      expect(JSON.stringify(reversed.body)).toContain('period.end');
      const malformed = await c.call('get_account_financials', { account, period: { start: 'March', end: '2026-03-01' } });
      expect(malformed.ok).toBe(false);
      const notOperator = await c.call('get_account_financials', { account: { account_id: advertiserBilled } });
      expect(notOperator.ok).toBe(false);
      expect(JSON.stringify(notOperator.body)).toContain('not the operator');
      const other = await w.client('mcp', OTHER_TOKEN);
      const foreign = await other.call('get_account_financials', { account });
      expect(JSON.stringify(foreign.body)).toContain('ACCOUNT_NOT_FOUND');
      await other.close();
      await c.close();
    });
  },
);
