import { timingSafeEqual } from 'node:crypto';

/** A new list auth_token: 256 random bits, handed out once (only its hash is kept). */
export function newListToken(): string {
  return `glt_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return new Bun.CryptoHasher('sha256').update(token).digest('hex');
}

/** Whether `token` is the one whose hash is stored (constant time). */
export function tokenMatches(token: string, storedHash: string): boolean {
  const a = Buffer.from(hashToken(token), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
