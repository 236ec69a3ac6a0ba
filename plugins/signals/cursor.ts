import { ProtocolError } from '../../core/errors.ts';

/**
 * Keyset cursor of get_signals: the exact sort key of the last signal returned (anchor flag, text
 * rank as a float8, coverage as its numeric text, id) and a fingerprint of the query. The next page
 * starts strictly after that row in the same total order, so every match appears exactly once,
 * ties included. JSON numbers round-trip a float8 exactly.
 */
export interface SignalsCursor {
  anchor: number;
  rank: number;
  coverage: string;
  id: string;
}

const bad = (why: string) =>
  new ProtocolError('INVALID_REQUEST', `pagination.cursor: malformed (${why}); pass the cursor of a previous response unchanged`, {
    field: 'pagination.cursor',
  });

export function encodeCursor(c: SignalsCursor, fingerprint: string): string {
  return Buffer.from(JSON.stringify([c.anchor, c.rank, c.coverage, c.id, fingerprint]), 'utf8').toString('base64url');
}

export function decodeCursor(raw: string, fingerprint: string): SignalsCursor {
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw bad('not base64url');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw bad('not a cursor');
  }
  if (!Array.isArray(parsed) || parsed.length !== 5) throw bad('not a cursor');
  const [anchor, rank, coverage, id, q] = parsed;
  if ((anchor !== 0 && anchor !== 1) || typeof rank !== 'number' || !Number.isFinite(rank)) throw bad('not a cursor');
  if (typeof coverage !== 'string' || !/^\d{1,3}(\.\d{1,2})?$/.test(coverage) || typeof id !== 'string' || !id) throw bad('not a cursor');
  if (q !== fingerprint) throw bad('it belongs to a different query');
  return { anchor, rank, coverage, id };
}

/**
 * Stable fingerprint of what a cursor is valid for (not the page size: it may change between pages).
 * It catches a cursor reused with another query; nothing rests on it being unforgeable (a client
 * may send any cursor), so a fast non-cryptographic hash does.
 */
export function fingerprintOf(query: unknown): string {
  return Bun.hash(JSON.stringify(query)).toString(36);
}
