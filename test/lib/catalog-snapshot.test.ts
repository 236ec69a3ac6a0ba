import { expect, test } from 'bun:test';
import { CatalogSnapshot } from '../../lib/catalog-snapshot.ts';

/** A loader whose loads the test finishes by hand; each load resolves to its sequence number. */
function manualLoader() {
  const pending: { resolve: (n: number) => void; reject: (e: Error) => void }[] = [];
  let started = 0;
  const load = () =>
    new Promise<number>((resolve, reject) => {
      const n = ++started;
      pending.push({ resolve: () => resolve(n), reject });
    });
  return {
    load,
    get started() {
      return started;
    },
    finish: () => pending.shift()!.resolve(0),
    fail: () => pending.shift()!.reject(new Error('database down')),
  };
}

test('concurrent readers share one load (single flight), and a current copy is not loaded again', async () => {
  const loader = manualLoader();
  const snapshot = new CatalogSnapshot(loader.load);
  const readers = [snapshot.get(), snapshot.get(), snapshot.get()];
  expect(loader.started).toBe(1);
  loader.finish();
  expect(await Promise.all(readers)).toEqual([1, 1, 1]);
  expect(await snapshot.get()).toBe(1);
  expect(loader.started).toBe(1);
  expect(snapshot.fresh).toBe(true);
});

test('a load that started before a newer change is kept but not taken as current', async () => {
  const loader = manualLoader();
  const snapshot = new CatalogSnapshot(loader.load);
  const reader = snapshot.get();
  snapshot.invalidate(); // a change announced while load 1 runs
  loader.finish();
  await Bun.sleep(0);
  expect(snapshot.peek()).toBe(1);
  expect(snapshot.fresh).toBe(false);
  expect(loader.started).toBe(2); // the reader waits for a load that started after the change
  loader.finish();
  expect(await reader).toBe(2);
  expect(snapshot.fresh).toBe(true);
});

test('invalidate marks the copy stale; the next read loads again', async () => {
  const loader = manualLoader();
  const snapshot = new CatalogSnapshot(loader.load);
  const first = snapshot.get();
  loader.finish();
  expect(await first).toBe(1);
  snapshot.invalidate();
  const second = snapshot.get();
  expect(loader.started).toBe(2);
  loader.finish();
  expect(await second).toBe(2);
});

test('a failed load reaches its readers and leaves the previous copy, still stale, for a retry', async () => {
  const loader = manualLoader();
  const snapshot = new CatalogSnapshot(loader.load);
  const first = snapshot.get();
  loader.finish();
  await first;
  const failed = snapshot.refresh();
  loader.fail();
  await expect(failed).rejects.toThrow('database down');
  expect(snapshot.peek()).toBe(1);
  expect(snapshot.fresh).toBe(false);
  const retry = snapshot.get();
  loader.finish();
  expect(await retry).toBe(3);
});

test('under a stream of changes a reader gets the newest copy after a bounded number of loads', async () => {
  const loader = manualLoader();
  const snapshot = new CatalogSnapshot(loader.load);
  const reader = snapshot.get();
  for (let i = 0; i < 5; i++) {
    snapshot.invalidate();
    loader.finish();
    await Bun.sleep(0);
  }
  expect(await reader).toBe(5);
  expect(snapshot.fresh).toBe(false);
});

test('settled: on a local database a copy no change has made stale needs no version read; elsewhere, or once stale, it does', async () => {
  const localLoader = manualLoader();
  const local = new CatalogSnapshot(localLoader.load, true);
  const first = local.get();
  localLoader.finish();
  const copy = await first;
  expect(local.settled(copy)).toBe(true);
  local.invalidate();
  expect(local.settled(copy)).toBe(false);

  const sharedLoader = manualLoader();
  const shared = new CatalogSnapshot(sharedLoader.load);
  const loading = shared.get();
  sharedLoader.finish();
  expect(shared.settled(await loading)).toBe(false);
});
