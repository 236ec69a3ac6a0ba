import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { sql } from '../../core/sql.ts';
import { loadMigrations } from '../../core/migrations.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import { dropSchema, forEachDatabase, openDatabase, type AdapterName } from '../support/db.ts';

const PLUGINS = join(import.meta.dir, '../../plugins');
const before = loadMigrations(join(import.meta.dir, '../fixtures/sales-migrations-before-split'));
// The split plugins in the order a deployment migrates them (each after the plugins it depends on).
const split: Array<[string, ReturnType<typeof loadMigrations>]> = [
  ['sales-accounts', loadMigrations(join(PLUGINS, 'sales-accounts/migrations'))],
  ['sales-creatives', loadMigrations(join(PLUGINS, 'sales-creatives/migrations'))],
  ['sales', loadMigrations(join(PLUGINS, 'sales/migrations'))],
  ['sales-buyer-data', loadMigrations(join(PLUGINS, 'sales-buyer-data/migrations'))],
];

/** Tables, columns, constraints and indexes of the sales tables, as comparable text. */
async function shape(db: DatabasePort): Promise<string[]> {
  const columns = await db.query<{ line: string }>(sql`SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable
      || ' ' || coalesce(column_default, '') AS line
    FROM information_schema.columns WHERE table_schema = current_schema() AND table_name LIKE 'sales\\_%' ORDER BY 1`);
  const constraints = await db.query<{ line: string }>(sql`SELECT c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid) AS line
    FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
    WHERE n.nspname = current_schema() AND c.conrelid::regclass::text LIKE 'sales\\_%' ORDER BY 1`);
  const indexes = await db.query<{ line: string }>(sql`SELECT indexname || ' ' || regexp_replace(indexdef, ' ON \\S+\\.', ' ON ') AS line
    FROM pg_indexes WHERE schemaname = current_schema() AND tablename LIKE 'sales\\_%' ORDER BY 1`);
  return [...columns, ...constraints, ...indexes].map((r) => r.line);
}

forEachDatabase<{ upgraded: DatabasePort; fresh: DatabasePort; drop: () => Promise<void> }>(
  'sales split migrations',
  async (adapter: AdapterName, schema) => ({
    upgraded: await openDatabase(adapter, schema, 2),
    fresh: await openDatabase(adapter, `${schema}_fresh`, 2),
    drop: () => dropSchema(adapter, `${schema}_fresh`),
  }),
  async ({ upgraded, fresh, drop }) => {
    await upgraded.close();
    await fresh.close();
    await drop();
  },
  (get) => {
    test('a database migrated by the single sales plugin upgrades to the split plugins, rows kept, same tables as a fresh one', async () => {
      const { upgraded, fresh } = get();
      await upgraded.migrate('sales', before);
      const now = new Date('2026-01-01T00:00:00Z');
      await upgraded.query(sql`INSERT INTO sales_accounts (account_id, owner, brand_domain, operator, billing, name, created_at, updated_at)
        VALUES ('acc_1', 'org_1', 'brand.example', 'agency.example', 'operator', 'brand via agency', ${now}::timestamptz, ${now}::timestamptz)`);
      await upgraded.query(sql`INSERT INTO sales_audiences (account_id, audience_id, owner, seller_id, status, created_at, updated_at)
        VALUES ('acc_1', 'aud_1', 'org_1', 'seller_1', 'ready', ${now}::timestamptz, ${now}::timestamptz)`);
      for (const [owner, migrations] of split) await upgraded.migrate(owner, migrations);
      for (const [owner, migrations] of split) await fresh.migrate(owner, migrations);

      expect(await upgraded.query(sql`SELECT a.account_id, u.audience_id FROM sales_accounts a JOIN sales_audiences u USING (account_id)`)).toEqual([
        { account_id: 'acc_1', audience_id: 'aud_1' },
      ]);
      const ledger = await upgraded.query<{ owner: string; version: number }>(
        sql`SELECT owner, version FROM schema_migrations WHERE owner LIKE 'sales%' ORDER BY owner, version`,
      );
      expect(ledger.map((r) => `${r.owner}/${r.version}`).sort()).toEqual([
        'sales-accounts/1',
        'sales-accounts/2',
        'sales-accounts/3',
        'sales-accounts/4',
        'sales-buyer-data/1',
        'sales-buyer-data/2',
        'sales-creatives/1',
        'sales/1',
        'sales/2',
        'sales/3',
        'sales/4',
        'sales/5',
        'sales/6',
        'sales/7',
        'sales/8',
        'sales/9',
      ]);
      const shapeFresh = await shape(fresh);
      expect(shapeFresh.length).toBeGreaterThan(100);
      expect(await shape(upgraded)).toEqual(shapeFresh);
    });
  },
);
