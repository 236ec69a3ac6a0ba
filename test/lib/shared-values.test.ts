import { expect, test } from 'bun:test';
import { SharedValues } from '../../lib/shared-values.ts';

test('equal values come back as one instance, nested ones too; different ones stay apart', () => {
  const shared = new SharedValues();
  const a = shared.of([{ currency: 'USD', price: 42 }]);
  const b = shared.of([{ currency: 'USD', price: 42 }]);
  expect(b).toBe(a);
  const c = shared.of([{ currency: 'USD', price: 43 }]);
  expect(c).not.toBe(a);
  expect(c).toEqual([{ currency: 'USD', price: 43 }]);
  // Arrays are equal with their elements in the same order only.
  const tags = shared.of(['sports', 'live']);
  expect(shared.of(['sports', 'live'])).toBe(tags);
  expect(shared.of(['live', 'sports'])).not.toBe(tags);
  // A string spelling JSON is not the value it spells.
  expect(shared.of('["sports","live"]')).toBe('["sports","live"]');
  expect(shared.of(null)).toBeNull();
  expect(shared.of(7)).toBe(7);
});

test('fields: every field shared but the row own ones; the row itself is a copy', () => {
  const shared = new SharedValues();
  const one = { id: 'a', tags: ['x'], prices: [{ p: 1 }] };
  const two = { id: 'b', tags: ['x'], prices: [{ p: 1 }] };
  const [s1, s2] = [shared.fields(one, new Set(['id'])), shared.fields(two, new Set(['id']))];
  expect(s1).toEqual(one);
  expect(s1).not.toBe(one);
  expect(s2.tags).toBe(s1.tags);
  expect(s2.prices).toBe(s1.prices);
  expect(s2.id).toBe('b');
});
