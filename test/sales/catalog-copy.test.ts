import { expect, test } from 'bun:test';
import type { SqlFragment } from '../../core/sql.ts';
import { assemble, type Deployment } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { Database, type DatabasePort } from '../../core/ports/database.ts';
import { Inventory } from '../../core/ports/inventory.ts';
import inventoryDb from '../../plugins/inventory-db/index.ts';
import { importCatalog } from '../../plugins/inventory-db/catalog.ts';
import { MemoryInventory } from '../../plugins/inventory-db/memory-inventory.ts';
import seed from '../../plugins/inventory-db/seed.json';
import { forEachDatabase, storagePlugin, type AdapterName } from '../support/db.ts';

// Every instance answers product searches and lookups from its own copy of the catalog and its
// text index (the one ranking of products). On
// Postgres each answer confirms the copy's version with one read shared by the calls waiting at
// that moment (never a read already under way), so a write through another instance is seen by the
// very next call; on PGlite the writer's announcement arrives before its call returns, and an answer
// from a current copy makes no query at all.

/** One deployment (an instance) of the product catalog on the schema. */
async function instance(adapter: AdapterName, schema: string): Promise<Deployment> {
  const deployment = await assemble(
    definePreset({ name: `catalog-copy-${schema}`, plugins: [await storagePlugin(adapter, schema), inventoryDb({ seed: false })] }),
    { env: { LOG_LEVEL: 'silent' } },
  );
  await deployment.start();
  return deployment;
}

const product = (id: string, name: string) => ({ ...seed.products[0]!, product_id: id, name, tags: [] });

/** A Database port counting statements by what they read; while `hold` is set, the next version check's answer waits for `release` after the database ran it. */
function gated(inner: DatabasePort) {
  const state = { versionReads: 0, loads: 0, other: 0 };
  let hold: { ran: () => void; released: Promise<void> } | null = null;
  const db: DatabasePort = {
    ...inner,
    kind: inner.kind,
    local: inner.local,
    async query<T>(statement: SqlFragment) {
      const text = statement.build().text;
      if (text.includes('FROM inventory_catalog_version')) state.versionReads++;
      else if (text.includes('FROM inventory_products')) state.loads++;
      else state.other++;
      const rows = await inner.query<T>(statement);
      if (hold && text.includes('FROM inventory_catalog_version')) {
        const h = hold;
        hold = null;
        h.ran();
        await h.released;
      }
      return rows;
    },
    transaction: (fn) => inner.transaction(fn),
    listen: (channel, handler, onReconnect) => inner.listen(channel, handler, onReconnect),
  };
  const holdNext = () => {
    let release = () => {};
    let ran = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const hasRun = new Promise<void>((resolve) => (ran = resolve));
    hold = { ran, released };
    return { ran: () => hasRun, release };
  };
  const reset = () => Object.assign(state, { versionReads: 0, loads: 0, other: 0 });
  return { db, state, holdNext, reset };
}

const ids = (page: { products: { product_id: string }[] }) => page.products.map((p) => p.product_id);

forEachDatabase<Deployment[]>(
  'product catalog copies',
  async (adapter, schema) => {
    const first = await instance(adapter, schema);
    await importCatalog(first.get(Database), { products: [product('copy_zebra', 'Zebra screens')] });
    return adapter === 'postgres' ? [first, await instance(adapter, schema)] : [first];
  },
  async (deployments) => {
    for (const d of deployments) await d.stop();
  },
  (get, adapter) => {
    // Each database has its own way; the other's tests are not registered for it.
    if (adapter === 'postgres') {
      test('Postgres: a product imported through one instance is found by the very next search and lookup of the other', async () => {
        const [a, b] = get();
        const other = b!.get(Inventory);
        expect(ids(await other.search({ brief: 'zebra', limit: 10 }))).toEqual(['copy_zebra']);
        await importCatalog(a!.get(Database), { products: [product('copy_okapi', 'Okapi screens')] });
        expect(ids(await other.search({ brief: 'okapi', limit: 10 }))).toEqual(['copy_okapi']);
        await importCatalog(a!.get(Database), { products: [product('copy_okapi', 'Tapir screens')] });
        expect((await other.get(['copy_okapi'])).get('copy_okapi')?.name).toBe('Tapir screens');
        expect(ids(await other.search({ brief: 'okapi', limit: 10 }))).toEqual([]);
        expect(ids(await other.search({ brief: 'tapir', limit: 10 }))).toEqual(['copy_okapi']);
      });

      test('Postgres: concurrent searches share one version read; a search arriving while a read runs waits for the next one and sees what committed meanwhile', async () => {
        const inner = get()[0]!.get(Database);
        expect(inner.local).toBe(false);
        const { db, state, holdNext, reset } = gated(inner);
        const inventory = new MemoryInventory(db);
        await inventory.search({ brief: 'screens gnu', limit: 10 }); // loads the copy and ranks the brief
        reset();

        const pages = await Promise.all(Array.from({ length: 20 }, () => inventory.search({ brief: 'screens gnu', limit: 10 })));
        expect(state).toEqual({ versionReads: 1, loads: 0, other: 0 });
        for (const page of pages) expect(page).toEqual(pages[0]!);

        // The first search's read has run; a product commits; then a second search arrives.
        reset();
        const held = holdNext();
        const first = inventory.search({ brief: 'screens gnu', limit: 10 });
        await held.ran();
        await importCatalog(inner, { products: [product('copy_gnu', 'Gnu screens')] });
        const second = inventory.search({ brief: 'screens gnu', limit: 10 });
        held.release();
        expect(ids(await first)).not.toContain('copy_gnu');
        expect(ids(await second)[0]).toBe('copy_gnu');
        // The held read, the second search's own (a newer version), then the reload's (the version, then the products).
        expect(state).toEqual({ versionReads: 3, loads: 1, other: 0 });
      });
    }

    if (adapter === 'pglite')
      test('PGlite: a search or lookup of a current copy runs no query; a write through the database is in the very next answer', async () => {
        const inner = get()[0]!.get(Database);
        expect(inner.local).toBe(true);
        const { db, state, reset } = gated(inner);
        const inventory = new MemoryInventory(db);
        const unfollow = await inventory.follow(get()[0]!.logger);
        try {
          expect(ids(await inventory.search({ brief: 'zebra screens', limit: 10 }))).toEqual(['copy_zebra']);
          reset();
          expect(ids(await inventory.search({ brief: 'zebra screens', limit: 10 }))).toEqual(['copy_zebra']);
          expect(ids(await inventory.search({ limit: 10, channels: ['ctv'] }))).toEqual(['copy_zebra']);
          expect([...(await inventory.get(['copy_zebra', 'nope'])).keys()]).toEqual(['copy_zebra']);
          expect(state).toEqual({ versionReads: 0, loads: 0, other: 0 });

          await importCatalog(inner, { products: [product('copy_ibex', 'Ibex screens')] });
          expect(ids(await inventory.search({ brief: 'zebra screens', limit: 10 })).sort()).toEqual(['copy_ibex', 'copy_zebra']);
          reset();
          expect(ids(await inventory.search({ brief: 'ibex', limit: 10 }))).toEqual(['copy_ibex']);
          expect(state).toEqual({ versionReads: 0, loads: 0, other: 0 }); // a new brief is ranked in memory too
        } finally {
          await unfollow();
        }
      });
  },
);
