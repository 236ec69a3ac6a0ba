import { ProtocolError } from '../../core/errors.ts';
import type { ProductQuery } from '../../core/ports/inventory.ts';

/** Stable fingerprint of what a cursor pages through (not the page size). */
export function fingerprint(q: ProductQuery): string {
  const { limit: _l, cursor: _c, ...rest } = q;
  return new Bun.CryptoHasher('sha256').update(JSON.stringify(rest)).digest('base64url').slice(0, 16);
}

const badCursor = () =>
  new ProtocolError('INVALID_REQUEST', 'pagination.cursor: not a cursor of this query; pass the cursor of the previous page unchanged', {
    field: 'pagination.cursor',
  });

/** The offset a cursor of this query (its fingerprint) resumes at; INVALID_REQUEST for anything else. */
export function decodeCursor(raw: string, print: string): number {
  if (raw.length > 256 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw badCursor();
  try {
    const [offset, p] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (p !== print || !Number.isSafeInteger(offset) || offset < 1) throw badCursor();
    return offset;
  } catch {
    throw badCursor();
  }
}

export const encodeCursor = (offset: number, print: string) => Buffer.from(JSON.stringify([offset, print])).toString('base64url');
