import { expect, test } from 'bun:test';
import { BoundedSet } from '../../lib/bounded-set.ts';

test('a bounded set keeps what was added up to its bound, then forgets everything at once and keeps the new keys', () => {
  const s = new BoundedSet(3);
  s.add(['a', 'b']);
  s.add(['c']);
  expect(['a', 'b', 'c', 'd'].map((k) => s.has(k))).toEqual([true, true, true, false]);
  // A fourth key would pass the bound: the three are forgotten, the new one kept.
  s.add(['d']);
  expect(['a', 'b', 'c', 'd'].map((k) => s.has(k))).toEqual([false, false, false, true]);
  // Several at once count together.
  s.add(['e', 'f', 'g']);
  expect(['d', 'e', 'f', 'g'].map((k) => s.has(k))).toEqual([false, true, true, true]);
});
