import { ProtocolError } from '../../core/errors.ts';

/**
 * Cursors bound to one query: a cursor carries where the next page starts (an offset, or the key of
 * the last row) and a fingerprint of the query's filters, so a cursor of another query is refused
 * rather than paging the wrong list.
 */
export function fingerprint(filters: unknown): string {
  return new Bun.CryptoHasher('sha256')
    .update(JSON.stringify(filters ?? null))
    .digest('base64url')
    .slice(0, 12);
}

/** An opaque cursor: where the next page starts, bound to one query. */
export function encodeCursor(position: string | number, print: string): string {
  return Buffer.from(JSON.stringify([position, print])).toString('base64url');
}

/** The position a cursor of this query carries; a cursor of another query (or garbage) is INVALID_REQUEST. */
export function decodeCursor<T extends string | number>(cursor: string, print: string, kind: 'string' | 'number', field = 'pagination.cursor'): T {
  const bad = new ProtocolError('INVALID_REQUEST', `${field}: not a cursor of this query; pass the cursor of the previous page unchanged`, { field });
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(cursor)) throw bad;
  try {
    const [position, p] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (p === print && typeof position === kind && (kind === 'string' || (Number.isSafeInteger(position) && position > 0))) return position as T;
  } catch {
    /* fall through */
  }
  throw bad;
}

export const encodeOffset = (offset: number, print: string) => encodeCursor(offset, print);

/** The offset an offset cursor of this query resumes at (0 without a cursor). */
export function decodeOffset(cursor: string | undefined, print: string, field = 'pagination.cursor'): number {
  return cursor === undefined ? 0 : decodeCursor<number>(cursor, print, 'number', field);
}

/** The `pagination` member of a list response (`print` may be worked out only when a next page needs a cursor). */
export function pageInfo(offset: number, returned: number, total: number, print: string | (() => string)) {
  const hasMore = offset + returned < total;
  return {
    has_more: hasMore,
    total_count: total,
    ...(hasMore ? { cursor: encodeOffset(offset + returned, typeof print === 'string' ? print : print()) } : {}),
  };
}
