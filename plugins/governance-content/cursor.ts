import { ProtocolError } from '../../core/errors.ts';

/** Short stable fingerprint of what a cursor is valid for (the query's filters, not its page size). */
export function fingerprint(value: unknown): string {
  return new Bun.CryptoHasher('sha256')
    .update(JSON.stringify(value ?? null))
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
