import { expect, test } from 'bun:test';
import { CONFUSABLE_FACTS, CONFUSABLE_SEQUENCES, confusableSkeleton } from '../../lib/confusables.ts';
import { normalizeDomain } from '../../lib/domain.ts';

const sk = (d: string) => confusableSkeleton(normalizeDomain(d));

test('digits read as letters fold to the letter', () => {
  expect(sk('paypa1.com')).toBe(sk('paypal.com'));
  expect(sk('g00gle.com')).toBe(sk('google.com'));
  expect(sk('paypa1.com')).toBe('paypal.com');
});

test('letter pairs that read as one letter fold (rn/m, vv/w)', () => {
  expect(sk('rnicrosoft.com')).toBe(sk('microsoft.com'));
  expect(sk('vvalmart.com')).toBe(sk('walmart.com'));
  expect(sk('barn.com')).toBe(sk('bam.com'));
});

test('whole-script Cyrillic and Greek look-alikes fold to Latin (mixed scripts never get here)', () => {
  expect(sk('аррӏе.com')).toBe('apple.com');
  expect(sk('рау.com')).toBe(sk('pay.com'));
  expect(sk('κοκο.com')).toBe(sk('koko.com'));
  expect(() => normalizeDomain('раураl.com')).toThrow(/mixes writing scripts/);
});

test('different words and letters with diacritics stay distinct', () => {
  expect(sk('bücher.de')).not.toBe(sk('bucher.de'));
  expect(sk('paypal.com')).not.toBe(sk('paypal.co'));
  expect(sk('example.com')).not.toBe(sk('exampie.com'));
});

test('the fact tables are well formed: single lowercase code points to ASCII prototypes that are never keys', () => {
  const keys = new Set(CONFUSABLE_FACTS.map(([from]) => from));
  expect(keys.size).toBe(CONFUSABLE_FACTS.length);
  for (const [from, to] of CONFUSABLE_FACTS) {
    expect([...from].length).toBe(1);
    expect(from).toBe(from.toLowerCase());
    expect(to).toMatch(/^[a-z]$/);
    expect(keys.has(to)).toBe(false);
  }
  for (const [from, to] of CONFUSABLE_SEQUENCES) {
    expect(from).toMatch(/^[a-z]{2}$/);
    expect(to).toMatch(/^[a-z]$/);
  }
});

test('folding is idempotent on its own output', () => {
  for (const d of ['rnicrosoft.com', 'аррӏе.com', 'vvvv.com', 'rrnn.com', 'g00gle.com']) {
    const once = sk(d);
    expect(confusableSkeleton(once)).toBe(once);
  }
});
