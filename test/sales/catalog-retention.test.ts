import { expect, test } from 'bun:test';
import { assemble, type Deployment } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { Database, type Queryable } from '../../core/ports/database.ts';
import type { SqlFragment } from '../../core/sql.ts';
import auth from '../../plugins/auth/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import inventoryDb from '../../plugins/inventory-db/index.ts';
import signals from '../../plugins/signals/index.ts';
import { loadCatalog as loadProducts } from '../../plugins/inventory-db/memory-catalog.ts';
import { loadCatalog as loadSignals } from '../../plugins/signals/memory-catalog.ts';
import { forEachDatabase, storagePlugin } from '../support/db.ts';

// A catalog copy keeps its rows compact (lib/compact-rows.ts); the raw rows a load read must not
// outlive it. A function made in the loading scope and kept by the copy keeps that whole scope: at
// 100k products that was every raw row, ~1.2M strings and ~250 MB more per process.

const COPIES = 6;

/**
 * Load COPIES copies and keep them (using each), then collect: how many of the arrays of rows read
 * `FROM table` are still alive. The collector also keeps what a stale pointer on the stack names (the
 * last rows read, say), so one or two may survive whatever the copies hold; kept by the copies, all do.
 */
async function survivors(db: Queryable, table: string, load: (q: Queryable) => Promise<object>, use: (copy: any) => unknown) {
  const answers: WeakRef<object>[] = [];
  const watched: Queryable = {
    async query<T>(statement: SqlFragment) {
      const rows = await db.query<T>(statement);
      if (new RegExp(`FROM ${table}\\b`).test(statement.build().text)) answers.push(new WeakRef(rows));
      return rows;
    },
  };
  const copies: object[] = [];
  for (let i = 0; i < COPIES; i++) {
    const copy = await load(watched);
    use(copy);
    copies.push(copy);
  }
  for (let i = 0; i < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    Bun.gc(true);
  }
  expect(answers.length).toBe(COPIES);
  expect(copies.length).toBe(COPIES);
  return answers.filter((a) => a.deref() !== undefined).length;
}

forEachDatabase<Deployment>(
  'catalog copies keep no raw rows',
  async (adapter, schema) => {
    const deployment = await assemble(
      definePreset({ name: `retention-${schema}`, plugins: [await storagePlugin(adapter, schema), auth(), idempotency(), tasks(), inventoryDb(), signals()] }),
      { env: { LOG_LEVEL: 'silent' } },
    );
    await deployment.start();
    return deployment;
  },
  (deployment) => deployment.stop(),
  (get) => {
    test('product catalog copies, with products built from them, hold none of the rows their loads read', async () => {
      expect(await survivors(get().get(Database), 'inventory_products', loadProducts, (c) => c.built.product(0))).toBeLessThanOrEqual(2);
    });
    test('signal catalog copies hold none of the rows their loads read', async () => {
      expect(await survivors(get().get(Database), 'signals', loadSignals, () => {})).toBeLessThanOrEqual(2);
    });
  },
);
