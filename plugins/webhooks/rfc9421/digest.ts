import { parseDictionary } from 'structured-headers';
import { normalizeBinaryDictionary, toBase64Url } from './binary.ts';

const ALGS: Record<string, string> = { 'sha-256': 'sha256', 'sha-512': 'sha512' };

/** RFC 9530 `Content-Digest` over the raw body bytes, written the webhook profile's way. */
export function contentDigest(body: Uint8Array): string {
  return `sha-256=:${toBase64Url(new Bun.CryptoHasher('sha256').update(body).digest())}:`;
}

/**
 * True when every recognized digest in the header matches the raw body (at least one is required);
 * unknown algorithms are ignored, as RFC 9530 allows.
 */
export function digestMatches(header: string | null, body: Uint8Array): boolean {
  if (!header) return false;
  const normalized = normalizeBinaryDictionary(header);
  if (!normalized) return false;
  let dict;
  try {
    dict = parseDictionary(normalized);
  } catch {
    return false;
  }
  let checked = 0;
  for (const [name, member] of dict) {
    const alg = ALGS[name];
    if (!alg) continue;
    const value = member[0];
    if (!(value instanceof ArrayBuffer)) return false;
    const expected = new Bun.CryptoHasher(alg as 'sha256').update(body).digest();
    if (!Buffer.from(value).equals(expected)) return false;
    checked++;
  }
  return checked > 0;
}
