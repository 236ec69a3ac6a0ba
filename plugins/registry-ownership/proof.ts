import { timingSafeEqual } from 'node:crypto';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import { CrawlerError } from '../../core/ports/crawler.ts';
import { hashNonce } from './store.ts';

export type ProofMethod = 'dns' | 'http';

/** Nonces are 256-bit random, base64url: 43 characters. */
const NONCE_LENGTH = 43;

export function newNonce(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
}

/** Where a proof is published, derived from the protocol namespace. */
export function proofLocations(domain: string, namespace: string, origin: string) {
  return {
    dnsName: `_${namespace}-owner.${domain}`,
    httpUrl: `${origin.replace('{domain}', domain)}/.well-known/${namespace}-ownership.txt`,
  };
}

/** Why a lookup did not find the nonce; each is explained to the caller. */
export type ProofFailureReason =
  | 'dns_lookup_failed'
  | 'dns_record_missing'
  | 'dns_record_mismatch'
  | 'http_fetch_failed'
  | 'http_status'
  | 'http_body_mismatch';

export type ProofCheck =
  | { found: true }
  | {
      found: false;
      reason: ProofFailureReason;
      message: string;
      details: Record<string, unknown>;
      /** Nonce-shaped tokens seen where the nonce should be (to recognise an outdated one). */
      candidates: string[];
    };

/**
 * Nonce-shaped tokens of a published text. The record or file "contains" the nonce (SUPPLEMENT):
 * `<nonce>`, `proto-owner=<nonce>` or a file with comments all work, but never a fragment of a
 * longer token.
 */
export function nonceCandidates(texts: readonly string[]): string[] {
  const out: string[] = [];
  for (const text of texts) for (const token of text.split(/[^A-Za-z0-9_-]+/)) if (token.length === NONCE_LENGTH) out.push(token);
  return out;
}

/** Whether any candidate hashes to one of `hashes` (constant-time comparison of digests). */
export function matchesAny(candidates: readonly string[], hashes: readonly Uint8Array[]): boolean {
  let found = false;
  for (const candidate of candidates) {
    const digest = hashNonce(candidate);
    for (const hash of hashes) if (hash.length === digest.length && timingSafeEqual(digest, hash)) found = true;
  }
  return found;
}

const preview = (values: readonly string[]) => values.slice(0, 5).map((v) => (v.length > 120 ? `${v.slice(0, 117)}...` : v));

/** Look for the nonce where the method says, through the SSRF-guarded crawler port. */
export async function checkProof(
  crawler: CrawlerPort,
  method: ProofMethod,
  domain: string,
  expectedHash: Uint8Array,
  options: { namespace: string; origin: string },
): Promise<ProofCheck> {
  const { dnsName, httpUrl } = proofLocations(domain, options.namespace, options.origin);
  if (method === 'dns') {
    let records: string[];
    try {
      records = await crawler.resolveTxt(dnsName);
    } catch (error) {
      const code = error instanceof CrawlerError ? error.code : 'dns_failed';
      return {
        found: false,
        reason: 'dns_lookup_failed',
        message: `The TXT lookup of ${dnsName} failed: ${(error as Error).message}`,
        details: { name: dnsName, crawler_error: code },
        candidates: [],
      };
    }
    const candidates = nonceCandidates(records);
    if (matchesAny(candidates, [expectedHash])) return { found: true };
    if (records.length === 0) {
      return { found: false, reason: 'dns_record_missing', message: `There is no TXT record at ${dnsName}`, details: { name: dnsName }, candidates };
    }
    return {
      found: false,
      reason: 'dns_record_mismatch',
      message: `None of the ${records.length} TXT record(s) at ${dnsName} holds the issued nonce`,
      details: { name: dnsName, records: preview(records) },
      candidates,
    };
  }
  let text: string;
  try {
    // Same-site redirects only (example.com -> www.example.com), each hop re-checked by the guard.
    const response = await crawler.fetch(httpUrl, { maxBytes: 4096, timeoutMs: 10_000, maxRedirects: 3, redirectPolicy: 'same-site' });
    if (response.status !== 200) {
      return {
        found: false,
        reason: 'http_status',
        message: `${httpUrl} answered HTTP ${response.status} (200 expected)`,
        details: { url: httpUrl, status: response.status },
        candidates: [],
      };
    }
    text = response.text();
  } catch (error) {
    const code = error instanceof CrawlerError ? error.code : 'connection_failed';
    return {
      found: false,
      reason: 'http_fetch_failed',
      message: `${httpUrl} could not be fetched (${code}): ${(error as Error).message}`,
      details: { url: httpUrl, crawler_error: code },
      candidates: [],
    };
  }
  const candidates = nonceCandidates([text]);
  if (matchesAny(candidates, [expectedHash])) return { found: true };
  return {
    found: false,
    reason: 'http_body_mismatch',
    message: `${httpUrl} does not contain the issued nonce`,
    details: { url: httpUrl, body_preview: preview([text.trim()])[0] ?? '' },
    candidates,
  };
}
