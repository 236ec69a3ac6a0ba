import { expect, test } from 'bun:test';
import { queryObject } from '../../hosts/rest/request.ts';

test('query strings parse as application/x-www-form-urlencoded, repeated keys as arrays', () => {
  const cases = [
    'http://h/p',
    'http://h/p?',
    'http://h/p?a=1&b=2',
    'http://h/p?a=1&a=2&a=3',
    'http://h/p?q=hello+world&x=%E2%9C%93&y=%2B',
    'http://h/p?bad=%E0%A4%A&ok=1',
    'http://h/p?flag&empty=&=v',
    'http://h/p?a=1#frag=2',
    'http://h/p?domain=https%3A%2F%2FAcme.com%2Fpath',
  ];
  for (const url of cases) {
    const expected: Record<string, string | string[]> = {};
    const u = new URL(url);
    for (const key of new Set(u.searchParams.keys())) {
      const all = u.searchParams.getAll(key);
      expected[key] = all.length > 1 ? all : all[0]!;
    }
    if (url.includes('%E0%A4%A')) expected.bad = '%E0%A4%A'; // kept literal rather than replaced with U+FFFD
    expect(queryObject(url)).toEqual(expected);
  }
});
