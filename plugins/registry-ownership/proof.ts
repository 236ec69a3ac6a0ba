import { timingSafeEqual } from 'node:crypto';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import { CrawlerError } from '../../core/ports/crawler.ts';
import { hashNonce } from './store.ts';

/** Nonces are 256-bit random, base64url: 43 characters. */
export const NONCE = /[A-Za-z0-9_-]{43}/g;

export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
}

export interface ProofCheck {
  found: boolean;
  /** Why it was not found (shown to the caller). */
  reason?: string;
}

function containsNonce(texts: readonly string[], expectedHash: Uint8Array): boolean {
  const expected = Buffer.from(expectedHash);
  let found = false;
  for (const text of texts) {
    for (const candidate of text.match(NONCE) ?? []) {
      // Only the hash is stored: hash every candidate and compare in constant time.
      if (timingSafeEqual(hashNonce(candidate), expected)) found = true;
    }
  }
  return found;
}

/** Look for the nonce where the method says, through the SSRF-guarded crawler. */
export async function checkProof(
  crawler: CrawlerPort,
  method: 'dns' | 'http',
  domain: string,
  expectedHash: Uint8Array,
  options: { namespace: string; origin: string },
): Promise<ProofCheck> {
  if (method === 'dns') {
    const name = `_${options.namespace}-owner.${domain}`;
    let records: string[];
    try {
      records = await crawler.resolveTxt(name);
    } catch (error) {
      return { found: false, reason: `TXT lookup of ${name} failed (${(error as Error).message})` };
    }
    if (containsNonce(records, expectedHash)) return { found: true };
    return { found: false, reason: records.length ? `no TXT record at ${name} holds the issued nonce` : `no TXT record at ${name}` };
  }
  const url = `${options.origin.replace('{domain}', domain)}/.well-known/${options.namespace}-ownership.txt`;
  try {
    const response = await crawler.fetch(url, { maxBytes: 4096, timeoutMs: 10_000, maxRedirects: 3, redirectPolicy: 'same-site' });
    if (response.status !== 200) return { found: false, reason: `${url} answered ${response.status}` };
    if (containsNonce([response.text()], expectedHash)) return { found: true };
    return { found: false, reason: `${url} does not contain the issued nonce` };
  } catch (error) {
    const detail = error instanceof CrawlerError ? `${error.code}: ${error.message}` : (error as Error).message;
    return { found: false, reason: `${url} could not be fetched (${detail})` };
  }
}
