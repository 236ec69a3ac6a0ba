import { ProtocolError } from '../../core/errors.ts';

/**
 * Offset cursors bound to one query: the cursor carries the offset and a fingerprint of the
 * filters, so a cursor of another query is refused rather than paging the wrong list.
 */
export function fingerprint(filters: unknown): string {
  return new Bun.CryptoHasher('sha256')
    .update(JSON.stringify(filters ?? null))
    .digest('base64url')
    .slice(0, 12);
}

export function encodeOffset(offset: number, print: string): string {
  return Buffer.from(JSON.stringify([offset, print])).toString('base64url');
}

export function decodeOffset(cursor: string | undefined, print: string, field = 'pagination.cursor'): number {
  if (cursor === undefined) return 0;
  const bad = new ProtocolError('INVALID_REQUEST', `${field}: not a cursor of this query; pass the cursor of the previous page unchanged`, { field });
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(cursor)) throw bad;
  try {
    const [offset, p] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (p === print && Number.isSafeInteger(offset) && offset > 0) return offset;
  } catch {
    /* fall through */
  }
  throw bad;
}

/** The `pagination` member of a list response. */
export function pageInfo(offset: number, returned: number, total: number, print: string) {
  const hasMore = offset + returned < total;
  return { has_more: hasMore, total_count: total, ...(hasMore ? { cursor: encodeOffset(offset + returned, print) } : {}) };
}
