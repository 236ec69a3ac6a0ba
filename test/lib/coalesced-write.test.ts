import { expect, test } from 'bun:test';
import { CoalescedWrite } from '../../lib/coalesced-write.ts';

/** An insert that records its batches and completes when the test says so. */
function recorder(fail: (items: readonly number[]) => boolean = () => false) {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  const insert = (items: readonly number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push([...items]);
      pending.push(() => (fail(items) ? reject(new Error(`bad ${items.join(',')}`)) : resolve()));
    });
  const finishAll = async () => {
    while (pending.length) {
      for (const done of pending.splice(0)) done();
      await Bun.sleep(0);
    }
  };
  return { batches, pending, insert, finishAll };
}

test('a caller waits for the write holding its items; callers arriving while every slot is busy share the next one', async () => {
  const r = recorder();
  const store = new CoalescedWrite(r.insert, { concurrency: 1, maxItems: 100 });
  let firstDone = false;
  const first = store.write([1, 2]).then(() => (firstDone = true));
  const rest = [store.write([3]), store.write([4, 5]), store.write([6])];
  expect(r.batches).toEqual([[1, 2]]);
  await Bun.sleep(0);
  expect(firstDone).toBe(false);
  await r.finishAll();
  await Promise.all([first, ...rest]);
  expect(r.batches).toEqual([
    [1, 2],
    [3, 4, 5, 6],
  ]);
  // Nothing to store: no write at all.
  await store.write([]);
  expect(r.batches.length).toBe(2);
});

test('up to `concurrency` writes run at once, and a joint write holds at most maxItems items', async () => {
  const r = recorder();
  const store = new CoalescedWrite(r.insert, { concurrency: 2, maxItems: 3 });
  const all = [store.write([1]), store.write([2]), store.write([3, 4]), store.write([5]), store.write([6, 7, 8, 9])];
  expect(r.batches).toEqual([[1], [2]]);
  await r.finishAll();
  await Promise.all(all);
  // [3,4] and [5] fit in 3; [6..9] is larger than maxItems and goes alone.
  expect(r.batches).toEqual([[1], [2], [3, 4, 5], [6, 7, 8, 9]]);
});

test("a joint write that fails is retried per caller: one caller's items fail only that caller", async () => {
  const r = recorder((items) => items.includes(13));
  const store = new CoalescedWrite(r.insert, { concurrency: 1, maxItems: 100 });
  const busy = store.write([1]);
  const good = store.write([2, 3]);
  const bad = store.write([13]);
  const settled = Promise.allSettled([busy, good, bad]);
  await r.finishAll();
  const [a, b, c] = await settled;
  expect([a.status, b.status, c.status]).toEqual(['fulfilled', 'fulfilled', 'rejected']);
  expect((c as PromiseRejectedResult).reason.message).toBe('bad 13');
  expect(r.batches).toEqual([[1], [2, 3, 13], [2, 3], [13]]);
  // A lone caller's failure is its own, without a retry.
  const alone = store.write([13]);
  const result = Promise.allSettled([alone]);
  await r.finishAll();
  expect((await result)[0]!.status).toBe('rejected');
  expect(r.batches.length).toBe(5);
});
