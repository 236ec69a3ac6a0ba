import { parseDictionary, type Dictionary } from 'structured-headers';
import { normalizeBinaryDictionary, toBase64Url } from './binary.ts';

const ALGS: Record<string, string> = { 'sha-256': 'sha256', 'sha-512': 'sha512' };

/**
 * RFC 9530 `Content-Digest` over the raw body bytes: base64url without padding as the webhook
 * profile writes it, or (`standard`) RFC 8941 sf-binary as the request-signing vectors write it.
 */
export function contentDigest(body: Uint8Array, encoding: 'base64url' | 'standard' = 'base64url'): string {
  const digest = new Bun.CryptoHasher('sha256').update(body).digest();
  return `sha-256=:${encoding === 'standard' ? Buffer.from(digest).toString('base64') : toBase64Url(digest)}:`;
}

/**
 * True when every recognized digest in the header matches the raw body (at least one is required);
 * unknown algorithms are ignored, as RFC 9530 allows.
 */
export function digestMatches(header: string | null, body: Uint8Array): boolean {
  if (!header) return false;
  const normalized = normalizeBinaryDictionary(header);
  if (!normalized) return false;
  let dict: Dictionary;
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
