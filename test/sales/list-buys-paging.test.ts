import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { HOUR, startSalesWorld, type SalesWorld } from './fixture.ts';

let n = 0;
const key = (p: string) => `${p}-paging-${String(++n).padStart(8, '0')}`;

// get_media_buys reads a page and the count of all matches in one statement, and takes the
// account of a buy filtered to one account from the account it resolved (plugins/sales/buys/list.ts).
forEachDatabase<SalesWorld>(
  'get_media_buys paging',
  (adapter, schema) => startSalesWorld(adapter, schema),
  (w) => w.close(),
  (get) => {
    test('pages carry the total of all matches, resume from their cursor, and name each buy its account', async () => {
      const w = get();
      const c = await w.client('mcp');
      const accounts = await c.call('sync_accounts', {
        idempotency_key: key('acc'),
        accounts: ['paging-a.example', 'paging-b.example'].map((domain) => ({ brand: { domain }, operator: domain, billing: 'operator' })),
      });
      const [a, b] = accounts.body.accounts.map((x: { account_id: string }) => x.account_id);
      const buy = (account: string) =>
        c.call('create_media_buy', {
          idempotency_key: key('buy'),
          account: { account_id: account },
          start_time: 'asap',
          end_time: new Date(w.clock.now().getTime() + 24 * HOUR).toISOString(),
          packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget: 6000 }],
        });
      const created: string[] = [];
      for (const account of [a, a, a, b]) created.push((await buy(account)).body.media_buy_id);

      const first = await c.call('get_media_buys', { account: { account_id: a }, pagination: { max_results: 2 } });
      expect(bothVersionsErrors('media-buy/get-media-buys-response.json', first.body)).toEqual([]);
      expect(first.body.media_buys.map((m: { media_buy_id: string }) => m.media_buy_id)).toEqual(created.slice(0, 2));
      expect(first.body.pagination).toMatchObject({ has_more: true, total_count: 3 });
      for (const m of first.body.media_buys)
        expect(m.account).toMatchObject({ account_id: a, name: 'paging-a.example via paging-a.example', status: 'active' });
      const second = await c.call('get_media_buys', { account: { account_id: a }, pagination: { max_results: 2, cursor: first.body.pagination.cursor } });
      expect(second.body.media_buys.map((m: { media_buy_id: string }) => m.media_buy_id)).toEqual([created[2]]);
      expect(second.body.pagination).toEqual({ has_more: false, total_count: 3 });

      // No account filter: every account's buys, each with its own account.
      const all = await c.call('get_media_buys', { media_buy_ids: created });
      expect(all.body.pagination).toEqual({ has_more: false, total_count: 4 });
      expect(all.body.media_buys.map((m: { account: { account_id: string } }) => m.account.account_id)).toEqual([a, a, a, b]);
      const none = await c.call('get_media_buys', { media_buy_ids: ['mb_none'] });
      expect(none.body).toMatchObject({ media_buys: [], pagination: { has_more: false, total_count: 0 } });
      await c.close();
    });
  },
);
