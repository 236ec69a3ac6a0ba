import { expect, test } from 'bun:test';
import { sql, type SqlFragment } from '../../core/sql.ts';
import { Database, type Queryable } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { startSalesWorld, HOUR, type SalesWorld } from './fixture.ts';
import { REFERENCE_AGENT } from './support/reference-formats.ts';
import { loadPackages } from '../../plugins/sales/buys/store.ts';
import { renderPackage } from '../../plugins/sales/buys/render.ts';

// Commits of write calls (issue 26): create_media_buy without governance and update_media_buy record
// their key and answer for replays in the buy's own transaction, claiming nothing first; so do sync_creatives
// and sync_accounts, each whole in one.

/**
 * Every statement of the seller's database: its transaction (numbered) or null when autocommitted; and per
 * transaction, how many of its statements were unanswered when its function returned (sent with COMMIT).
 */
function record(w: SalesWorld) {
  const db = w.seller.deployment.get(Database);
  const seen: Array<{ tx: number | null; text: string }> = [];
  const leftToCommit: number[] = [];
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
    let unanswered = 0;
    return transaction(async (tx) => {
      const result = await fn({
        query: <R>(s: SqlFragment) => {
          seen.push({ tx: id, text: text(s) });
          unanswered++;
          return tx.query<R>(s).finally(() => unanswered--);
        },
      });
      leftToCommit.push(unanswered);
      return result;
    });
  }) as typeof db.transaction;
  return {
    seen,
    leftToCommit,
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

/** create_media_buy's arguments: one display package of 1000, a six-hour flight starting in an hour. */
function buyArgs<A extends object>(w: SalesWorld, idempotency_key: string, account: A) {
  const start = w.clock.now().getTime() + HOUR;
  return {
    idempotency_key,
    account,
    start_time: new Date(start).toISOString(),
    end_time: new Date(start + 6 * HOUR).toISOString(),
    packages: [{ product_id: 'display_ros_standard', pricing_option_id: 'display_ros_cpc', budget: 1000 }],
  };
}

/** One call with the seller's statements recorded: its answer and its writes. */
async function recorded(w: SalesWorld, c: Client, task: string, args: Record<string, unknown>) {
  const r = record(w);
  try {
    const answer = await c.call(task, args);
    return { answer, writes: writesOf(r.seen), leftToCommit: r.leftToCommit };
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
    test('create_media_buy: the buy, its package, booking, history and the key with the stored answer in one transaction, nothing before; a retry replays it', async () => {
      const w = get();
      const c = await w.client('rest');
      const account = await accountOf(c, 1);
      const args = buyArgs(w, 'commits-create-0000001', account);
      const { answer: created, writes, leftToCommit } = await recorded(w, c, 'create_media_buy', args);
      expect(created.ok).toBe(true);
      // Nothing waited for but the booking's decision: every statement goes with COMMIT (one round trip).
      expect(leftToCommit).toEqual([6]);
      expectCommits(
        writes,
        [],
        [
          'INSERT INTO adsim_lines',
          'INSERT INTO adsim_orders',
          'INSERT INTO idempotency_keys',
          'INSERT INTO sales_buy_history',
          'INSERT INTO sales_media_buys',
          'INSERT INTO sales_packages',
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
    test('sync_creatives: concurrent duplicates write once and replay; a creative already in the library that this instance never saw is upserted as before', async () => {
      const w = get();
      const c = await w.client('rest');
      const account = await accountOf(c, 5);
      const spot = (id: string, name = 'Spot') => ({
        creative_id: id,
        name,
        format_id: { agent_url: REFERENCE_AGENT, id: 'video_ctv_preroll_30s' },
        assets: { video: { asset_type: 'video', url: 'https://cdn.acme.example/spot.mp4', width: 1920, height: 1080, duration_ms: 30000 } },
      });
      const args = { idempotency_key: 'commits-creatives-dupes-0001', account, creatives: [spot('dupe_spot')] };
      const answers = await Promise.all(Array.from({ length: 6 }, () => c.call('sync_creatives', args)));
      expect(answers.every((a) => a.ok)).toBe(true);
      expect(answers.filter((a) => !a.body.replayed)).toHaveLength(1);
      for (const a of answers) expect(a.body.creatives).toEqual([{ creative_id: 'dupe_spot', action: 'created', status: 'approved' }]);
      const other = await c.call('sync_creatives', { ...args, creatives: [spot('dupe_spot', 'Other')] });
      expect(other.body.code).toBe('IDEMPOTENCY_CONFLICT');
      // Written by another instance: this one tries it as new, finds it there and upserts.
      const db = w.seller.deployment.get(Database);
      await db.query(sql`INSERT INTO sales_creatives (account_id, creative_id, owner, name, format_id, format_key, assets, tags, status, created_at, updated_at)
        SELECT account_id, 'elsewhere_spot', owner, name, format_id, format_key, assets, tags, status, created_at, updated_at FROM sales_creatives
        WHERE account_id = ${account.account_id}::text AND creative_id = 'dupe_spot'`);
      const again = await c.call('sync_creatives', {
        idempotency_key: 'commits-creatives-dupes-0002',
        account,
        creatives: [spot('new_spot'), spot('elsewhere_spot', 'Renamed')],
      });
      expect(again.body.creatives.map((x: { action: string }) => x.action)).toEqual(['created', 'updated']);
      const replay = await c.call('sync_creatives', {
        idempotency_key: 'commits-creatives-dupes-0002',
        account,
        creatives: [spot('new_spot'), spot('elsewhere_spot', 'Renamed')],
      });
      expect(replay.body).toMatchObject({ replayed: true, creatives: again.body.creatives });
      const names = await db.query<{ creative_id: string; name: string }>(sql`SELECT creative_id, name FROM sales_creatives
        WHERE account_id = ${account.account_id}::text ORDER BY creative_id`);
      expect(names).toEqual([
        { creative_id: 'dupe_spot', name: 'Spot' },
        { creative_id: 'elsewhere_spot', name: 'Renamed' },
        { creative_id: 'new_spot', name: 'Spot' },
      ]);
      const unchanged = await c.call('sync_creatives', { idempotency_key: 'commits-creatives-dupes-0003', account, creatives: [spot('new_spot')] });
      expect(unchanged.body.creatives[0].action).toBe('unchanged');
    });
    test('update_media_buy: the buy and package writes with the key and the stored answer in one transaction, nothing before; the answer is the stored row', async () => {
      const w = get();
      const c = await w.client('rest');
      const account = await accountOf(c, 3);
      const created = await c.call('create_media_buy', buyArgs(w, 'commits-create-0000003', account));
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
        const { answer: updated, writes, leftToCommit } = await recorded(w, c, 'update_media_buy', args);
        expect(updated.ok).toBe(true);
        // The buy's row, its history and the answer kept go with COMMIT, the package's too unless it is read back (rounded).
        expect(leftToCommit).toEqual([i === 2 || i === 3 ? 3 : 5]);
        expectCommits(
          writes,
          [],
          ['INSERT INTO adsim_lines', 'INSERT INTO idempotency_keys', 'INSERT INTO sales_buy_history', 'UPDATE sales_media_buys', 'UPDATE sales_packages'],
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
    test('create_media_buy: concurrent duplicates make one buy and replay it; the key with another payload is IDEMPOTENCY_CONFLICT, nothing written', async () => {
      const w = get();
      const c = await w.client('rest');
      const account = await accountOf(c, 4);
      const args = buyArgs(w, 'commits-create-dupes-0004', account);
      const answers = await Promise.all(Array.from({ length: 8 }, () => c.call('create_media_buy', args)));
      expect(answers.every((a) => a.ok)).toBe(true);
      expect(new Set(answers.map((a) => a.body.media_buy_id)).size).toBe(1);
      expect(answers.filter((a) => !a.body.replayed)).toHaveLength(1);
      const db = w.seller.deployment.get(Database);
      const buys = async () =>
        (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM sales_media_buys WHERE account_id = ${account.account_id}::text`))[0]!.n;
      expect(await buys()).toBe(1);
      const other = await c.call('create_media_buy', { ...args, packages: [{ ...args.packages[0], budget: 2000 }] });
      expect(other.body.code).toBe('IDEMPOTENCY_CONFLICT');
      expect(await buys()).toBe(1);
    });

    test('create_media_buy on a sandbox account: the key is claimed (committed) before the sandbox directive is taken', async () => {
      const w = get();
      const c = await w.client('rest');
      const args = buyArgs(w, 'commits-create-sandbox-05', { brand: { domain: 'commits5.example' }, operator: 'commits5.example', sandbox: true });
      const synced = await c.call('sync_accounts', {
        idempotency_key: 'commits-accounts-sandbox-05',
        accounts: [{ ...args.account, billing: 'operator' }],
      });
      expect(synced.body.accounts[0].sandbox).toBe(true);
      const { answer, writes } = await recorded(w, c, 'create_media_buy', args);
      expect(answer.ok).toBe(true);
      expectCommits(
        writes,
        ['INSERT INTO idempotency_keys', 'DELETE FROM sales_forced_arms'],
        [
          'INSERT INTO adsim_lines',
          'INSERT INTO adsim_orders',
          'INSERT INTO sales_buy_history',
          'INSERT INTO sales_media_buys',
          'INSERT INTO sales_packages',
          'UPDATE idempotency_keys',
        ],
      );
      expect((await c.call('create_media_buy', args)).body).toMatchObject({ replayed: true, media_buy_id: answer.body.media_buy_id });
    });

    test('update_media_buy: concurrent duplicates change the buy once and replay that answer', async () => {
      const w = get();
      const c = await w.client('rest');
      const account = await accountOf(c, 6);
      const created = await c.call('create_media_buy', buyArgs(w, 'commits-create-0000006', account));
      const { media_buy_id, revision } = created.body;
      const args = {
        idempotency_key: 'commits-update-dupes-006',
        account,
        media_buy_id,
        packages: [{ package_id: created.body.packages[0].package_id, budget: 1500 }],
      };
      const answers = await Promise.all(Array.from({ length: 8 }, () => c.call('update_media_buy', args)));
      expect(answers.every((a) => a.ok)).toBe(true);
      expect(answers.filter((a) => !a.body.replayed)).toHaveLength(1);
      expect(new Set(answers.map((a) => a.body.revision))).toEqual(new Set([revision + 1]));
      const listed = await c.call('get_media_buys', { account, media_buy_ids: [media_buy_id] });
      expect(listed.body.media_buys[0].revision).toBe(revision + 1);
    });
  },
);
