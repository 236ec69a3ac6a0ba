import { expect, test } from 'bun:test';
import { BatchedRead, byWish } from '../../lib/batched-read.ts';

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A batched query answering each wish with `shape:wish#round`, recording the rounds it was given. */
function recorder(fail?: (shape: string) => boolean) {
  const rounds: Array<[string, string[]]> = [];
  const reads = new BatchedRead<string, string>(async (shape, wishes) => {
    rounds.push([shape, wishes]);
    if (fail?.(shape)) throw new Error(`${shape} failed`);
    return wishes.map((w) => `${shape}:${w}#${rounds.length}`);
  });
  return { reads, rounds };
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

test('a caller arriving while its round runs gets the next one', async () => {
  const { reads, rounds } = recorder();
  const first = reads.read('a', 'x');
  await turn();
  const second = reads.read('a', 'y');
  expect(await Promise.all([first, second])).toEqual(['a:x#1', 'a:y#2']);
  expect(rounds.map(([, w]) => w)).toEqual([['x'], ['y']]);
});

test("a failed statement fails its round's callers only", async () => {
  const { reads } = recorder((shape) => shape === 'bad');
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
