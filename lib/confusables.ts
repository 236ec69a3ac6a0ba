import { toUnicode } from 'tr46';

/**
 * Fact table: characters that render like a Latin letter or digit in common fonts, with the
 * prototype they are read as. A small, hand-picked subset in the spirit of Unicode's UTS #39
 * `confusables.txt` (the full table has thousands of rows, most irrelevant to hostnames that
 * already passed UTS #46 mapping and our single-script rule). Lowercase only: domains arrive
 * normalized. Every prototype is plain ASCII and never itself a key, so folding is idempotent.
 *
 * Changing a row changes stored skeletons: add a migration to the entry tables that clears their
 * `skeleton` column (start-up recomputes it), as registry-brands/registry-properties version 3 do.
 */
export const CONFUSABLE_FACTS: ReadonlyArray<readonly [lookalike: string, prototype: string, script: string]> = [
  // Digits read as letters.
  ['0', 'o', 'Digit'],
  ['1', 'l', 'Digit'],
  // Cyrillic letters drawn like Latin ones.
  ['а', 'a', 'Cyrillic'],
  ['г', 'r', 'Cyrillic'],
  ['е', 'e', 'Cyrillic'],
  ['һ', 'h', 'Cyrillic'],
  ['і', 'i', 'Cyrillic'],
  ['ј', 'j', 'Cyrillic'],
  ['к', 'k', 'Cyrillic'],
  ['ӏ', 'l', 'Cyrillic'],
  ['о', 'o', 'Cyrillic'],
  ['р', 'p', 'Cyrillic'],
  ['с', 'c', 'Cyrillic'],
  ['ѕ', 's', 'Cyrillic'],
  ['у', 'y', 'Cyrillic'],
  ['ү', 'y', 'Cyrillic'],
  ['х', 'x', 'Cyrillic'],
  ['ԁ', 'd', 'Cyrillic'],
  ['ԛ', 'q', 'Cyrillic'],
  ['ԝ', 'w', 'Cyrillic'],
  // Greek letters drawn like Latin ones.
  ['α', 'a', 'Greek'],
  ['γ', 'y', 'Greek'],
  ['η', 'n', 'Greek'],
  ['ι', 'i', 'Greek'],
  ['κ', 'k', 'Greek'],
  ['ν', 'v', 'Greek'],
  ['ο', 'o', 'Greek'],
  ['ρ', 'p', 'Greek'],
  ['υ', 'u', 'Greek'],
  ['χ', 'x', 'Greek'],
  ['ω', 'w', 'Greek'],
  // Latin variants.
  ['ı', 'i', 'Latin'],
  ['ɑ', 'a', 'Latin'],
  ['ɡ', 'g', 'Latin'],
  ['ɩ', 'i', 'Latin'],
];

/**
 * Fact table: letter pairs that read as one letter at small sizes (`rnicrosoft`). Applied after
 * the per-character folding, so `гn` (Cyrillic ge + n) folds too. `cl`/`d` is left out: it occurs
 * in too many ordinary words (click, cloud, club) for its small protective value.
 */
export const CONFUSABLE_SEQUENCES: ReadonlyArray<readonly [lookalike: string, prototype: string]> = [
  ['rn', 'm'],
  ['vv', 'w'],
];

const BY_CHAR = new Map(CONFUSABLE_FACTS.map(([from, to]) => [from, to]));

/**
 * The confusable skeleton of a normalized (ASCII, see normalizeDomain) domain: two domains with
 * one skeleton look alike (`paypa1.com`, `rnicrosoft.com`, an all-Cyrillic `аррӏе.com`). Letters
 * with diacritics are distinct letters here (`bücher.de` is not `bucher.de`).
 */
export function confusableSkeleton(asciiDomain: string): string {
  const { domain } = toUnicode(asciiDomain.toLowerCase(), { useSTD3ASCIIRules: true });
  let out = '';
  for (const ch of domain) out += BY_CHAR.get(ch) ?? ch;
  for (const [from, to] of CONFUSABLE_SEQUENCES) out = out.replaceAll(from, to);
  return out;
}
