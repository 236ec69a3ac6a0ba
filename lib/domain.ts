import * as v from 'valibot';
import { toASCII, toUnicode } from 'tr46';
import { TtlCache } from './cache.ts';

/** Why a domain was refused; the message is safe to show to the caller. */
export class DomainError extends Error {
  override name = 'DomainError';
}

// Characters that reorder or hide text; never legitimate in a hostname a person typed.
const BIDI_OR_INVISIBLE = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/u;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

// Scripts checked for mixing inside one label. Han/Kana/Hangul/Bopomofo legitimately mix with
// each other (CJK writing systems) and with Latin; any other combination is a homograph risk.
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Devanagari',
  'Bengali',
  'Thai',
  'Georgian',
  'Hangul',
  'Han',
  'Hiragana',
  'Katakana',
  'Bopomofo',
] as const;
const SCRIPT_RE = SCRIPTS.map((s) => [s, new RegExp(`\\p{Script=${s}}`, 'u')] as const);
const CJK = new Set(['Han', 'Hiragana', 'Katakana', 'Hangul', 'Bopomofo', 'Latin']);

function scriptsOf(label: string): Set<string> {
  const found = new Set<string>();
  for (const ch of label) {
    if (/[0-9-]/.test(ch)) continue;
    for (const [name, re] of SCRIPT_RE) if (re.test(ch)) found.add(name);
  }
  return found;
}

/** True when a label mixes scripts that are not a recognised CJK combination. */
export function isMixedScript(label: string): boolean {
  const scripts = scriptsOf(label);
  if (scripts.size <= 1) return false;
  return ![...scripts].every((s) => CJK.has(s));
}

/**
 * Normalize user input to the ASCII (A-label) hostname stored everywhere:
 * protocol, credentials, port, path, query and fragment stripped; lowercased; IDNA (UTS #46,
 * non-transitional, STD3 rules, DNS length checks, bidi and joiner rules) to ASCII; at least two
 * labels; no IP literals; no mixed-script labels (homograph defence).
 */
export function normalizeDomain(input: string): string {
  const memo = memoized.get(input);
  if (memo !== undefined) {
    if (memo instanceof DomainError) throw memo;
    return memo;
  }
  try {
    const out = normalizeUncached(input);
    memoized.set(input, out);
    return out;
  } catch (error) {
    if (error instanceof DomainError) memoized.set(input, error);
    throw error;
  }
}

// IDNA processing costs tens of microseconds; hot lookups repeat the same few inputs.
const memoized = new TtlCache<string, string | DomainError>(10_000, 3_600_000);

function normalizeUncached(input: string): string {
  if (typeof input !== 'string') throw new DomainError('must be a string');
  if (input.length > 512) throw new DomainError('is too long');
  if (CONTROL.test(input)) throw new DomainError('contains control characters');
  if (BIDI_OR_INVISIBLE.test(input)) throw new DomainError('contains bidirectional or invisible formatting characters');
  let host = input.trim();
  host = host.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  host = host.split(/[/?#]/, 1)[0] ?? '';
  if (host.includes('@')) throw new DomainError('must not contain credentials');
  if (host.startsWith('[')) throw new DomainError('must be a domain name, not an IP address');
  host = host.replace(/:\d*$/, '').replace(/\.$/, '');
  if (!host) throw new DomainError('is empty');
  if (/\s/u.test(host)) throw new DomainError('must not contain whitespace');
  const ascii = toASCII(host, {
    checkBidi: true,
    checkHyphens: true,
    checkJoiners: true,
    useSTD3ASCIIRules: true,
    verifyDNSLength: true,
    transitionalProcessing: false,
  });
  if (ascii === null) throw new DomainError('is not a valid domain name (IDNA/UTS #46 processing failed)');
  const labels = ascii.split('.');
  if (labels.length < 2) throw new DomainError('must have at least two labels (e.g. example.com)');
  if (ascii.length > 253) throw new DomainError('exceeds 253 characters');
  for (const label of labels) {
    if (!LABEL.test(label)) throw new DomainError(`has an invalid label "${label.slice(0, 70)}"`);
  }
  if (/^\d+$/.test(labels[labels.length - 1]!)) throw new DomainError('must be a domain name, not an IP address');
  const unicode = toUnicode(ascii, { checkBidi: true, checkHyphens: true, checkJoiners: true, useSTD3ASCIIRules: true });
  if (unicode.error) throw new DomainError('is not a valid domain name');
  for (const label of unicode.domain.split('.')) {
    if (isMixedScript(label)) throw new DomainError(`label "${label}" mixes writing scripts (possible homograph)`);
  }
  return ascii;
}

/** The normalized domain, or null when invalid. */
export function tryNormalizeDomain(input: string): string | null {
  try {
    return normalizeDomain(input);
  } catch {
    return null;
  }
}

/** Valibot schema: a domain as typed by a person, output normalized (see normalizeDomain). */
export function domainSchema() {
  return v.pipe(
    v.string('must be a string'),
    v.minLength(1, 'is required'),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      try {
        return normalizeDomain(dataset.value);
      } catch (error) {
        addIssue({ message: `invalid domain: ${(error as Error).message}` });
        return NEVER;
      }
    }),
  );
}
