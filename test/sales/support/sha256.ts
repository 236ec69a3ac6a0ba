/** Lower-case hex SHA-256, as buyers hash identifiers before sending them. */
export const sha256 = (s: string) => new Bun.CryptoHasher('sha256').update(s).digest('hex');
