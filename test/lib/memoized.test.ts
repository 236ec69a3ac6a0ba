import { expect, test } from 'bun:test';
import { memoized } from '../../lib/memoized.ts';

test('computes a key once, falsy answers included, and forgets everything once full', () => {
  const asked: string[] = [];
  const f = memoized(3, (key) => {
    asked.push(key);
    return key === 'none' ? null : key.length > 1;
  });
  expect([f('a'), f('bb'), f('none'), f('a'), f('bb'), f('none')]).toEqual([false, true, null, false, true, null]);
  expect(asked).toEqual(['a', 'bb', 'none']);
  f('c'); // a fourth key: the three before are forgotten
  f('a');
  expect(asked).toEqual(['a', 'bb', 'none', 'c', 'a']);
  f('c');
  expect(asked).toHaveLength(5);
});
