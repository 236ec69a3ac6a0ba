import { ProtocolError } from './errors.ts';

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
}

export function encodeCursor(cursor: SearchCursor): string {
  return Buffer.from(JSON.stringify([cursor.s, cursor.u, cursor.q]), 'utf8').toString('base64url');
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
  if (!Array.isArray(parsed) || parsed.length !== 3) throw bad('not a cursor');
  const [s, u, q] = parsed;
  if (typeof s !== 'number' || !Number.isFinite(s) || typeof u !== 'string' || u.length === 0 || typeof q !== 'string') throw bad('not a cursor');
  if (q !== fingerprint) throw bad('it belongs to a different query');
  return { s, u, q };
}

/** Stable fingerprint of the filters a cursor is valid for (not the limit: page size may change). */
export function queryFingerprint(parts: unknown): string {
  const text = JSON.stringify(parts);
  return new Bun.CryptoHasher('sha256').update(text).digest('base64url').slice(0, 16);
}
