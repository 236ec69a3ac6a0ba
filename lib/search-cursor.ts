import { ProtocolError } from '../core/errors.ts';
import { SEARCH_DIMENSIONS, type AgentSearchQuery } from '../core/ports/search.ts';

/**
 * Keyset cursor of agent search, shared by every search adapter. It carries the exact sort key
 * of the last row returned (base score as stored, agent_url) and a fingerprint of the query, so
 * the next page starts strictly after that row in the same total order. JSON numbers round-trip
 * a float64 exactly, so the score is compared bit for bit.
 */
export interface SearchCursor {
  /** baseScore of the last row. */
  s: number;
  /** agent_url of the last row. */
  u: string;
  /** Fingerprint of the query the cursor belongs to. */
  q: string;
  /**
   * How many rows with score exactly `s` were returned so far. Both adapters page by `> u` now;
   * the count stays in the format so cursors already handed out keep decoding.
   */
  n: number;
}

export function encodeCursor(cursor: SearchCursor): string {
  return Buffer.from(JSON.stringify([cursor.s, cursor.u, cursor.q, cursor.n]), 'utf8').toString('base64url');
}

const bad = (why: string) =>
  new ProtocolError('INVALID_REQUEST', `cursor: malformed (${why}); pass the cursor of a previous response unchanged`, { field: 'cursor' });

export function decodeCursor(raw: string, fingerprint: string): SearchCursor {
  if (raw.length > 2048 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw bad('not base64url');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw bad('not a cursor');
  }
  if (!Array.isArray(parsed) || parsed.length !== 4) throw bad('not a cursor');
  const [s, u, q, n] = parsed;
  if (typeof s !== 'number' || !Number.isFinite(s) || typeof u !== 'string' || u.length === 0 || typeof q !== 'string') throw bad('not a cursor');
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw bad('not a cursor');
  if (q !== fingerprint) throw bad('it belongs to a different query');
  return { s, u, q, n };
}

/** Stable fingerprint of the filters a cursor is valid for (not the limit: page size may change). */
export function queryFingerprint(query: AgentSearchQuery): string {
  const filters = SEARCH_DIMENSIONS.map((d) => [...new Set(query.filters[d] ?? [])].sort());
  const text = JSON.stringify([filters, query.has_tmp === true, query.min_properties ?? 0, query.viewer.member, query.viewer.orgId]);
  return new Bun.CryptoHasher('sha256').update(text).digest('base64url').slice(0, 16);
}

/**
 * The cursor after a page: the last row's key, and the size of its tie group seen so far
 * (rows of this page with the same score, plus the previous cursor's count when it continues the group).
 */
export function nextCursor(page: Array<{ base: number; agent_url: string }>, previous: SearchCursor | null, fingerprint: string): string {
  const last = page[page.length - 1]!;
  let n = 0;
  for (let i = page.length - 1; i >= 0 && page[i]!.base === last.base; i--) n++;
  if (n === page.length && previous && previous.s === last.base) n += previous.n;
  return encodeCursor({ s: last.base, u: last.agent_url, q: fingerprint, n });
}
