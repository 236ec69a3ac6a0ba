import { expect, test } from 'bun:test';
import { TtlCache } from '../../lib/cache.ts';

test('entries expire after the TTL and the oldest insertion is evicted at capacity', () => {
  let now = 0;
  const cache = new TtlCache<string, number>(2, 1000, () => now);
  cache.set('a', 1);
  cache.set('b', 2);
  expect(cache.get('a')).toBe(1);
  cache.set('c', 3); // evicts a (oldest insertion)
  expect(cache.get('a')).toBeUndefined();
  expect([cache.get('b'), cache.get('c')]).toEqual([2, 3]);
  now = 999;
  expect(cache.get('b')).toBe(2);
  now = 1000;
  expect(cache.get('b')).toBeUndefined();
  expect(cache.size).toBe(1);
  cache.clear();
  expect(cache.get('c')).toBeUndefined();
});

test('deleteWhere drops exactly the entries whose value (or key) matches', () => {
  const cache = new TtlCache<string, number>(10, 1000);
  for (const [k, v] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
    ['d', 4],
  ] as const)
    cache.set(k, v);
  cache.deleteWhere((v) => v % 2 === 0);
  cache.deleteWhere((_, k) => k === 'c');
  expect([cache.get('a'), cache.get('b'), cache.get('c'), cache.get('d')]).toEqual([1, undefined, undefined, undefined]);
});
