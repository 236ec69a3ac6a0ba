import { expect, test } from 'bun:test';
import { BatchedRead, byWish } from '../../lib/batched-read.ts';

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A batched query answering each wish with `shape:wish#round`, recording the rounds it was given; `hold` keeps rounds running until released. */
function recorder(options: { fail?: (shape: string) => boolean; hold?: boolean; concurrency?: number } = {}) {
  const rounds: Array<[string, string[]]> = [];
  const held: Array<() => void> = [];
  let running = 0;
  let mostAtOnce = 0;
  const reads = new BatchedRead<string, string>(async (shape, wishes) => {
    rounds.push([shape, wishes]);
    const n = rounds.length;
    mostAtOnce = Math.max(mostAtOnce, ++running);
    if (options.hold) await new Promise<void>((resolve) => held.push(resolve));
    running--;
    if (options.fail?.(shape)) throw new Error(`${shape} failed`);
    return wishes.map((w) => `${shape}:${w}#${n}`);
  }, options.concurrency);
  return { reads, rounds, release: () => held.shift()!(), mostAtOnce: () => mostAtOnce };
}

test('callers waiting at once share one round per shape, each with its own answer, the same wish twice answered twice', async () => {
  const { reads, rounds } = recorder();
  const answers = Promise.all([reads.read('a', 'x'), reads.read('b', 'y'), reads.read('a', 'z'), reads.read('a', 'x')]);
  expect(rounds).toEqual([]);
  expect(await answers).toEqual(['a:x#1', 'b:y#2', 'a:z#1', 'a:x#1']);
  expect(rounds).toEqual([
    ['a', ['x', 'z', 'x']],
    ['b', ['y']],
  ]);
});

test('a caller arriving while its round runs gets another; two rounds of a shape run at once, a third waits for one to end', async () => {
  const r = recorder({ hold: true });
  const first = r.reads.read('a', 'x');
  await turn();
  const second = r.reads.read('a', 'y');
  await turn();
  const third = [r.reads.read('a', 'z'), r.reads.read('a', 'w')];
  await turn();
  expect(r.rounds.map(([, w]) => w)).toEqual([['x'], ['y']]);
  r.release();
  expect(await first).toBe('a:x#1');
  r.release();
  expect(await second).toBe('a:y#2');
  await turn();
  r.release();
  expect(await Promise.all(third)).toEqual(['a:z#3', 'a:w#3']);
  expect(r.mostAtOnce()).toBe(2);
});

test('with a concurrency of one, rounds of a shape run one after the other', async () => {
  const r = recorder({ hold: true, concurrency: 1 });
  const first = r.reads.read('a', 'x');
  await turn();
  const second = r.reads.read('a', 'y');
  await turn();
  expect(r.rounds).toHaveLength(1);
  r.release();
  await first;
  await turn();
  r.release();
  expect(await second).toBe('a:y#2');
  expect(r.mostAtOnce()).toBe(1);
});

test("a failed statement fails its round's callers only", async () => {
  const { reads } = recorder({ fail: (shape) => shape === 'bad' });
  const [bad, good] = await Promise.allSettled([reads.read('bad', 'x'), reads.read('good', 'y')]);
  expect(bad).toMatchObject({ status: 'rejected', reason: new Error('bad failed') });
  expect(good).toEqual({ status: 'fulfilled', value: 'good:y#2' });
});

test('byWish groups tagged rows per wish, in order, empty for a wish without rows', () => {
  expect(
    byWish(
      [
        { i: 0, v: 1 },
        { i: 2, v: 2 },
        { i: 0, v: 3 },
      ],
      3,
    ),
  ).toEqual([
    [
      { i: 0, v: 1 },
      { i: 0, v: 3 },
    ],
    [],
    [{ i: 2, v: 2 }],
  ]);
});
