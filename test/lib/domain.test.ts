import { expect, test } from 'bun:test';
import { normalizeDomain } from '../../lib/domain.ts';

test('normalizes what people type into one ASCII hostname', () => {
  expect(normalizeDomain('https://Acme.COM/path?x=1#frag')).toBe('acme.com');
  expect(normalizeDomain('  acme.com.  ')).toBe('acme.com');
  expect(normalizeDomain('acme.com:8443')).toBe('acme.com');
  expect(normalizeDomain('Bücher.DE')).toBe('xn--bcher-kva.de');
  expect(normalizeDomain('xn--bcher-kva.de')).toBe('xn--bcher-kva.de');
  expect(normalizeDomain('日本語.jp')).toBe('xn--wgv71a119e.jp');
  expect(normalizeDomain('ＡＣＭＥ.com')).toBe('acme.com'); // full-width letters map under UTS #46
});

test('refuses invalid, ambiguous and hostile domains with a reason', () => {
  const cases: Array<[string, RegExp]> = [
    ['http://', /empty/],
    ['a..b', /not a valid domain/],
    [`${'a'.repeat(300)}.com`, /not a valid domain/],
    [`${'a'.repeat(64)}.com`, /not a valid domain/],
    ['localhost', /two labels/],
    ['127.0.0.1', /IP address/],
    ['[::1]', /IP address/],
    ['user@acme.com', /credentials/],
    ['ac me.com', /whitespace|not a valid/],
    ['acme\u202E.com', /bidirectional/],
    ['acme\u200B.com', /invisible/],
    ['acme\u0000.com', /control/],
    ['-acme.com', /not a valid domain/],
    ['pаypal.com', /mixes writing scripts/],
    ['under_score.com', /not a valid domain/],
  ];
  for (const [input, reason] of cases) expect(() => normalizeDomain(input)).toThrow(reason);
});
