import { describe, expect, test } from 'bun:test';
import { canonicalJson, payloadHash } from '../../lib/canonical-json.ts';

/** The definition, written member by member: the fast canonicalJson must write exactly this. */
function reference(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const out = JSON.stringify(value);
    return out === undefined ? 'null' : out;
  }
  if (Array.isArray(value)) return `[${value.map((x) => (x === undefined ? 'null' : reference(x))).join(',')}]`;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(o[k])}`).join(',')}}`;
}

/** A random JSON-ish value from a seeded generator (keys in random order, some undefined members). */
function randomValue(next: () => number, depth: number): unknown {
  const r = next();
  if (depth <= 0 || r < 0.4) {
    const leaves = [null, true, false, 0, -1.5, 1e21, 'a', 'é\n"\\', '\ud800', '', 123456789, undefined];
    return leaves[Math.floor(next() * leaves.length)];
  }
  if (r < 0.65) return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth - 1));
  const o: Record<string, unknown> = {};
  const names = ['b', 'a', 'z', 'aa', 'B', '_', 'é', '10', '2', 'event_id', 'custom_data'];
  for (let i = Math.floor(next() * 5); i > 0; i--) o[names[Math.floor(next() * names.length)]!] = randomValue(next, depth - 1);
  return o;
}

describe('canonicalJson', () => {
  test('writes what the member-by-member definition writes, for random values', () => {
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const value = randomValue(next, 4);
      expect(canonicalJson(value)).toBe(reference(value));
    }
  });

  test('non-JSON members are written as the definition writes them, and the input is left as it was', () => {
    const value = {
      b: [1, undefined, () => 1, { z: 1, a: [new Date(0), Symbol('x')] }],
      a: { c: undefined, f: () => 2, s: Symbol('y'), d: new Date(1) },
      n: Number.NaN,
      t: { toJSON: () => 'x', k: 1 },
      o: Object.assign(Object.create(null), { y: 1, x: 2 }),
    };
    const before = Object.keys(value.a);
    expect(canonicalJson(value)).toBe(reference(value));
    expect(Object.keys(value.a)).toEqual(before);
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson({ y: 1, x: { b: 2, a: 1 } })).toBe('{"x":{"a":1,"b":2},"y":1}');
  });

  test('payloadHash: members in another order, or another envelope, hash equally', () => {
    const a = payloadHash({ idempotency_key: 'k1', events: [{ event_id: 'e', value: 1 }], source: 'web' });
    const b = payloadHash({ source: 'web', events: [{ value: 1, event_id: 'e' }], idempotency_key: 'k2', context: { x: 1 } });
    expect(a).toBe(b);
    expect(payloadHash({ events: [{ event_id: 'e', value: 2 }], source: 'web' })).not.toBe(a);
  });
});
