import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import type { Body, TaskClient } from '../support/agent.ts';
import { HOUR, OTHER_TOKEN, startSalesWorld, type SalesWorld } from './fixture.ts';
import { REFERENCE_AGENT } from './support/reference-formats.ts';

let n = 0;
const key = (p: string) => `${p}-batched-${String(++n).padStart(8, '0')}`;

// get_media_buys, get_media_buy_delivery, list_creatives and list_accounts answer every caller
// waiting at once with one statement (lib/batched-read.ts): calls of two organizations, with
// different filters and the same ones, made all together, each get what the call gets alone, and
// an organization naming the other's account is refused in the same round.
forEachDatabase<SalesWorld>(
  'batched reads',
  (adapter, schema) => startSalesWorld(adapter, schema),
  (w) => w.close(),
  (get) => {
    test("calls made together each get their lone answer; the other organization's account is refused among them", async () => {
      const w = get();
      const setUp = async (c: TaskClient, domain: string) => {
        const accounts = await c.call('sync_accounts', {
          idempotency_key: key('acc'),
          accounts: [`${domain}-a.example`, `${domain}-b.example`].map((d) => ({ brand: { domain: d }, operator: d, billing: 'operator' })),
        });
        const [a, b] = accounts.body.accounts.map((x: { account_id: string }) => x.account_id) as [string, string];
        const buys: string[] = [];
        for (const [i, account] of [a, a, b].entries()) {
          const r = await c.call('create_media_buy', {
            idempotency_key: key('buy'),
            account: { account_id: account },
            start_time: 'asap',
            end_time: new Date(w.clock.now().getTime() + 24 * HOUR).toISOString(),
            packages: [
              {
                product_id: 'display_ros_standard',
                pricing_option_id: 'display_ros_cpc',
                budget: 1000 + i,
                creatives: [
                  {
                    creative_id: `${domain}_${i}`,
                    name: `banner ${i}`,
                    format_id: { agent_url: REFERENCE_AGENT, id: 'display_300x250_image' },
                    assets: { banner: { asset_type: 'image', url: `https://cdn.${domain}.example/${i}.png`, width: 300, height: 250 } },
                  },
                ],
              },
            ],
          });
          expect(r.ok).toBe(true);
          buys.push(r.body.media_buy_id);
        }
        return { a, b, buys };
      };
      const mine = await w.client('rest');
      const theirs = await w.client('rest', OTHER_TOKEN);
      const m = await setUp(mine, 'mine');
      const t = await setUp(theirs, 'theirs');
      await w.advance(2 * HOUR); // delivery to report

      // Each call with what it must answer alone: ok, or the code of its refusal.
      const calls = (c: TaskClient, s: typeof m, other: typeof m): Array<[TaskClient, string, Record<string, unknown>, string]> => [
        [c, 'list_accounts', {}, 'ok'],
        [c, 'list_accounts', { account: { account_id: s.b } }, 'ok'],
        [c, 'list_accounts', { account: { account_id: other.a } }, 'ok'], // none listed
        [c, 'get_media_buys', {}, 'ok'],
        [c, 'get_media_buys', { account: { account_id: s.a } }, 'ok'],
        [c, 'get_media_buys', { media_buy_ids: [s.buys[2]!, other.buys[0]!] }, 'ok'], // its own only
        [c, 'get_media_buys', { account: { account_id: s.a }, pagination: { max_results: 1 } }, 'ok'],
        [c, 'get_media_buys', { account: { account_id: other.a } }, 'ACCOUNT_NOT_FOUND'],
        [c, 'get_media_buy_delivery', { account: { account_id: s.a } }, 'ok'],
        [c, 'get_media_buy_delivery', { media_buy_ids: [s.buys[2]!] }, 'ok'],
        [c, 'get_media_buy_delivery', { media_buy_ids: [other.buys[0]!] }, 'MEDIA_BUY_NOT_FOUND'],
        // The ad server's reads of named buys start beside the listing: unlisted ones (the other's, filtered out) show nowhere.
        [
          c,
          'get_media_buy_delivery',
          { media_buy_ids: [s.buys[0]!, s.buys[2]!, s.buys[1]!], time_granularity: 'hourly', include_window_breakdown: true },
          'ok',
        ],
        [c, 'get_media_buy_delivery', { media_buy_ids: [s.buys[1]!, other.buys[0]!], status_filter: ['active', 'pending_start'] }, 'ok'],
        [c, 'get_media_buy_delivery', { media_buy_ids: [s.buys[0]!, s.buys[0]!], status_filter: 'completed' }, 'ok'], // none listed
        [c, 'list_creatives', {}, 'ok'],
        [c, 'list_creatives', { account: { account_id: s.b } }, 'ok'],
        [c, 'list_creatives', { account: { account_id: other.a } }, 'ACCOUNT_NOT_FOUND'],
        [c, 'list_creatives', { filters: { media_buy_ids: [s.buys[0]!] } }, 'ok'],
        [c, 'list_creatives', { filters: { unassigned: true } }, 'ok'],
      ];
      const all = [...calls(mine, m, t), ...calls(theirs, t, m)];
      const alone: Body[] = [];
      for (const [c, name, args] of all) alone.push((await c.call(name, args)).body);
      // Alone, each sees its own organization only; naming the other's account or buy is refused.
      const code = (body: Body) => body.code ?? body.errors?.[0]?.code;
      for (const [i, [c, , , expected]] of all.entries()) {
        const other = c === mine ? t : m;
        expect(code(alone[i]!) ?? 'ok').toBe(expected);
        const text = JSON.stringify(alone[i]);
        // Named in a refusal at most: the other organization's account a and first buy.
        for (const id of [other.b, ...other.buys.slice(1)]) expect(text).not.toContain(id);
      }
      // Buys named by id (their ad server reads start beside the listing) report as the same buys listed by account.
      const byAccount = await mine.call('get_media_buy_delivery', { account: { account_id: m.a } });
      const byIds = await mine.call('get_media_buy_delivery', { media_buy_ids: [m.buys[1]!, m.buys[0]!] });
      expect(byAccount.body.media_buy_deliveries.length).toBe(2);
      expect(byIds.body).toEqual(byAccount.body);
      // Together, twice over and interleaved: the same answers.
      const together = await Promise.all([...all, ...all].map(([c, name, args]) => c.call(name, args)));
      expect(together.map((r) => r.body)).toEqual([...alone, ...alone]);
      await mine.close();
      await theirs.close();
    });
  },
);
