import { expect, test } from 'bun:test';
import type { SqlFragment } from '../../core/sql.ts';
import { Database, type Queryable } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { startSalesWorld, HOUR, type SalesWorld } from './fixture.ts';
import { REFERENCE_AGENT } from './support/reference-formats.ts';
import { loadPackages } from '../../plugins/sales/buys/store.ts';
import { renderPackage } from '../../plugins/sales/buys/render.ts';

// Commits of write calls (issue 26): create_media_buy without governance stores its answer for
// replays in the buy's own transaction, its rows issued together; sync_creatives runs whole in one.

/** Every statement of the seller's database: its transaction (numbered) or null when autocommitted. */
function record(w: SalesWorld) {
  const db = w.seller.deployment.get(Database);
  const seen: Array<{ tx: number | null; text: string }> = [];
  let n = 0;
  const query = db.query.bind(db);
  const transaction = db.transaction.bind(db);
  const text = (s: SqlFragment) => s.build().text.replace(/\s+/g, ' ').trim();
  db.query = (<T>(s: SqlFragment) => {
    seen.push({ tx: null, text: text(s) });
    return query<T>(s);
  }) as typeof db.query;
  db.transaction = (<T>(fn: (tx: Queryable) => Promise<T>) => {
    const id = ++n;
    return transaction((tx) =>
      fn({
        query: <R>(s: SqlFragment) => {
          seen.push({ tx: id, text: text(s) });
          return tx.query<R>(s);
        },
      }),
    );
  }) as typeof db.transaction;
  return {
    seen,
    restore: () => {
      db.query = query;
      db.transaction = transaction;
    },
  };
}

const writesOf = (seen: Array<{ tx: number | null; text: string }>) =>
  seen
    .filter((s) => /^(INSERT|UPDATE|DELETE|WITH)/i.test(s.text))
    .map((s) => ({ tx: s.tx, what: /(INSERT INTO|UPDATE|DELETE FROM) (\w+)/.exec(s.text)?.slice(1).join(' ') }));

type Client = Awaited<ReturnType<SalesWorld['client']>>;

/** A new account of the caller (sync_accounts), as requests name it. */
async function accountOf(c: Client, n: number) {
  const domain = `commits${n}.example`;
  const synced = await c.call('sync_accounts', {
    idempotency_key: `commits-accounts-${String(n).padStart(6, '0')}`,
    accounts: [{ brand: { domain }, operator: domain, billing: 'operator' }],
  });
  return { account_id: synced.body.accounts[0].account_id as string };
}

/** One call with the seller's statements recorded: its answer and its writes. */
async function recorded(w: SalesWorld, c: Client, task: string, args: Record<string, unknown>) {
  const r = record(w);
  try {
    const answer = await c.call(task, args);
    return { answer, writes: writesOf(r.seen) };
  } finally {
    r.restore();
  }
}

/** The writes went out as `autocommitted` (in order) and then `inOneTransaction` (in any order). */
function expectCommits(writes: ReturnType<typeof writesOf>, autocommitted: string[], inOneTransaction: string[]) {
  expect(writes.filter((x) => x.tx === null).map((x) => x.what)).toEqual(autocommitted);
  const inTx = writes.filter((x) => x.tx !== null);
  expect(new Set(inTx.map((x) => x.tx)).size).toBe(1);
  expect(inTx.map((x) => x.what).sort()).toEqual(inOneTransaction);
}

forEachDatabase<SalesWorld>(
  'write commits',
  (adapter, schema) => startSalesWorld(adapter, schema),
  (w) => w.close(),
  (get) => {
    test('create_media_buy: the claim commits, then the buy, its package, booking, history and the stored answer in one transaction; a retry replays it', async () => {
      const w = get();
      const c = await w.client('rest');
      const account = await accountOf(c, 1);
      const start = w.clock.now().getTime() + HOUR;
      const args = {
        idempotency_key: 'commits-create-0000001',
        account,
        start_time: new Date(start).toISOString(),
        end_time: new Date(start + 6 * HOUR).toISOString(),
        packages: [{ product_id: 'display_ros_standard', pricing_option_id: 'display_ros_cpc', budget: 1000 }],
      };
      const { answer: created, writes } = await recorded(w, c, 'create_media_buy', args);
      expect(created.ok).toBe(true);
      expectCommits(
        writes,
        ['INSERT INTO idempotency_keys'],
        [
          'INSERT INTO adsim_lines',
          'INSERT INTO adsim_orders',
          'INSERT INTO sales_buy_history',
          'INSERT INTO sales_media_buys',
          'INSERT INTO sales_packages',
          'UPDATE idempotency_keys',
        ],
      );
      const replay = await c.call('create_media_buy', args);
      const { replayed, ...first } = replay.body;
      expect(replayed).toBe(true);
      expect(first).toEqual(created.body);
    });

    test('sync_creatives: library writes and the idempotency record commit in one transaction; a retry replays it', async () => {
      const w = get();
      const c = await w.client('rest');
      const account = await accountOf(c, 2);
      const args = {
        idempotency_key: 'commits-creatives-00001',
        account,
        creatives: [
          {
            creative_id: 'commits_spot',
            name: 'Spot',
            format_id: { agent_url: REFERENCE_AGENT, id: 'video_ctv_preroll_30s' },
            assets: { video: { asset_type: 'video', url: 'https://cdn.acme.example/spot.mp4', width: 1920, height: 1080, duration_ms: 30000 } },
          },
        ],
      };
      const { answer: done, writes } = await recorded(w, c, 'sync_creatives', args);
      expect(done.body.creatives[0]).toMatchObject({ creative_id: 'commits_spot', action: 'created' });
      expectCommits(writes, [], ['INSERT INTO idempotency_keys', 'INSERT INTO sales_creatives']);
      const replay = await c.call('sync_creatives', args);
      expect(replay.body).toMatchObject({ replayed: true, creatives: [{ creative_id: 'commits_spot', action: 'created' }] });
    });
    test('update_media_buy: the claim commits, then the buy and package writes with the stored answer in one transaction; the answer is the stored row', async () => {
      const w = get();
      const c = await w.client('rest');
      const account = await accountOf(c, 3);
      const start = w.clock.now().getTime() + HOUR;
      const created = await c.call('create_media_buy', {
        idempotency_key: 'commits-create-0000003',
        account,
        start_time: new Date(start).toISOString(),
        end_time: new Date(start + 6 * HOUR).toISOString(),
        packages: [{ product_id: 'display_ros_standard', pricing_option_id: 'display_ros_cpc', budget: 1000 }],
      });
      expect(created.ok).toBe(true);
      const { media_buy_id } = created.body;
      const package_id = created.body.packages[0].package_id;
      const db = w.seller.deployment.get(Database);
      // Budgets and bid prices the columns keep as sent (the row is not read back) and ones they round (read back).
      const changes = [
        { budget: 1234.5 },
        { budget: 2000, bid_price: 0.75 },
        { budget: 2500.125 },
        { budget: 3333.3333, bid_price: 1.234567 },
        { budget: 1e6 + 0.01, bid_price: 2 },
        { budget: 150.1 },
      ];
      for (const [i, change] of changes.entries()) {
        const args = { idempotency_key: `commits-update-${String(i).padStart(8, '0')}`, account, media_buy_id, packages: [{ package_id, ...change }] };
        const { answer: updated, writes } = await recorded(w, c, 'update_media_buy', args);
        expect(updated.ok).toBe(true);
        expectCommits(
          writes,
          ['INSERT INTO idempotency_keys'],
          ['INSERT INTO adsim_lines', 'INSERT INTO sales_buy_history', 'UPDATE idempotency_keys', 'UPDATE sales_media_buys', 'UPDATE sales_packages'],
        );
        // The answer's package is the stored one, rendered as any read renders it.
        const stored = (await loadPackages(db, [media_buy_id])).get(media_buy_id)!;
        expect(updated.body.affected_packages).toEqual(stored.map(renderPackage));
        const replay = await c.call('update_media_buy', args);
        const { replayed, ...first } = replay.body;
        expect(replayed).toBe(true);
        expect(first).toEqual(updated.body);
      }
    });
  },
);
