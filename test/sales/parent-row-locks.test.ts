import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { forEachDatabase } from '../support/db.ts';
import { startSalesWorld, HOUR, type SalesWorld } from './fixture.ts';

// A row that others reference (an account, a media buy) is locked FOR NO KEY UPDATE by the tasks that change
// it: its key never changes, and FOR UPDATE would also wait for every open transaction that inserted a row
// referencing it (the foreign key check holds FOR KEY SHARE until commit), stalling the task for as long.
// Postgres only: PGlite has one connection, so an open transaction there keeps every other statement waiting.
forEachDatabase<SalesWorld>(
  'parent row locks',
  (adapter, schema) => startSalesWorld(adapter, schema),
  (w) => w.close(),
  (get, adapter) => {
    if (adapter !== 'postgres') return;

    /** Run `call` while another transaction holds an uncommitted row referencing the parent; rolls that one back after. */
    async function whileReferenced<T>(insertChild: ReturnType<typeof sql>, call: () => Promise<T>): Promise<T> {
      const db = get().seller.deployment.get(Database);
      let release!: () => void;
      const released = new Promise<void>((r) => {
        release = r;
      });
      let inserted!: () => void;
      const holding = new Promise<void>((r) => {
        inserted = r;
      });
      const other = db
        .transaction(async (tx) => {
          await tx.query(insertChild);
          inserted();
          await released;
          throw new Error('rolled back on purpose');
        })
        .catch(() => {});
      await holding;
      try {
        return await call();
      } finally {
        release();
        await other;
      }
    }

    test('sync_accounts updates an account while another transaction inserts a row referencing it', async () => {
      const w = get();
      const c = await w.client('rest');
      const account = { brand: { domain: 'locks.example' }, operator: 'locks.example', billing: 'operator' };
      const made = await c.call('sync_accounts', { idempotency_key: 'locks-account-000001', accounts: [account] });
      const accountId = made.body.accounts[0].account_id as string;
      const changed = await whileReferenced(
        sql`INSERT INTO account_governance_agents (account_id, url, scheme, credentials, updated_at)
          VALUES (${accountId}::text, 'https://gov.example/mcp', 'Bearer', 'x', now())`,
        () => c.call('sync_accounts', { idempotency_key: 'locks-account-000002', accounts: [{ ...account, billing: 'agent' }] }),
      );
      expect(changed.ok).toBe(true);
      expect(changed.body.accounts[0]).toMatchObject({ account_id: accountId, billing: 'agent', action: 'updated' });
    });

    test('update_media_buy changes a buy while another transaction inserts a row referencing it', async () => {
      const w = get();
      const c = await w.client('rest');
      const synced = await c.call('sync_accounts', {
        idempotency_key: 'locks-account-000003',
        accounts: [{ brand: { domain: 'locks-buy.example' }, operator: 'locks-buy.example', billing: 'operator' }],
      });
      const account = { account_id: synced.body.accounts[0].account_id as string };
      const start = w.clock.now().getTime() + HOUR;
      const created = await c.call('create_media_buy', {
        idempotency_key: 'locks-buy-0000000001',
        account,
        start_time: new Date(start).toISOString(),
        end_time: new Date(start + 6 * HOUR).toISOString(),
        packages: [{ product_id: 'display_ros_standard', pricing_option_id: 'display_ros_cpc', budget: 1000 }],
      });
      expect(created.ok).toBe(true);
      const mediaBuyId = created.body.media_buy_id as string;
      const updated = await whileReferenced(
        sql`INSERT INTO sales_buy_history (media_buy_id, revision, at, actor, action) VALUES (${mediaBuyId}::text, 99, now(), 'test', 'note')`,
        () => c.call('update_media_buy', { idempotency_key: 'locks-buy-0000000002', account, media_buy_id: mediaBuyId, paused: true }),
      );
      expect(updated.ok).toBe(true);
      expect(updated.body.media_buy_id).toBe(mediaBuyId);
    });
  },
);
