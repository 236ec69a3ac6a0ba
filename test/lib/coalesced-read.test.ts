import { expect, test } from 'bun:test';
import { CoalescedRead } from '../../lib/coalesced-read.ts';

/** A query the test answers by hand; each resolves to its sequence number. */
function manualQuery() {
  const pending: { resolve: (n: number) => void; reject: (e: Error) => void }[] = [];
  let started = 0;
  let running = 0;
  let mostAtOnce = 0;
  const query = () =>
    new Promise<number>((resolve, reject) => {
      const n = ++started;
      mostAtOnce = Math.max(mostAtOnce, ++running);
      pending.push({
        resolve: () => {
          running--;
          resolve(n);
        },
        reject: (e) => {
          running--;
          reject(e);
        },
      });
    });
  return {
    query,
    get started() {
      return started;
    },
    get mostAtOnce() {
      return mostAtOnce;
    },
    finish: () => pending.shift()!.resolve(0),
    fail: () => pending.shift()!.reject(new Error('database down')),
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('reads received in the same I/O turn share one query, started on the next turn', async () => {
  const q = manualQuery();
  const reads = new CoalescedRead(q.query);
  const waiting = [reads.read(), reads.read(), reads.read()];
  expect(q.started).toBe(0);
  await turn();
  expect(q.started).toBe(1);
  q.finish();
  expect(await Promise.all(waiting)).toEqual([1, 1, 1]);
});

test('a read arriving while a query runs never joins it: it gets the next one, started when the first ends', async () => {
  const q = manualQuery();
  const reads = new CoalescedRead(q.query);
  const first = reads.read();
  await turn();
  expect(q.started).toBe(1);
  const second = [reads.read(), reads.read()];
  await turn();
  expect(q.started).toBe(1); // one query at a time
  q.finish();
  expect(await first).toBe(1);
  await turn();
  expect(q.started).toBe(2);
  q.finish();
  expect(await Promise.all(second)).toEqual([2, 2]);
  expect(q.mostAtOnce).toBe(1);
});

test("a failed query fails its round's reads only; the next round queries again", async () => {
  const q = manualQuery();
  const reads = new CoalescedRead(q.query);
  const failing = [reads.read(), reads.read()];
  await turn();
  q.fail();
  for (const r of failing) await expect(r).rejects.toThrow('database down');
  const next = reads.read();
  await turn();
  expect(q.started).toBe(2);
  q.finish();
  expect(await next).toBe(2);
});
