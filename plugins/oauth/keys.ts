import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';
import type { ClockPort } from '../../core/ports/clock.ts';

export const ALG = 'ES256';

export interface SigningKey {
  kid: string;
  key: CryptoKey;
}

/**
 * The built-in authorization server's keys, in the database so every instance signs and verifies
 * with the same set. The newest active key signs; every active key verifies. A key is made on first
 * start (two instances starting together may each add one: both verify, the newest signs).
 * Rotation: `rotate()` adds a key; retiring an old one (`retired_at`) stops its tokens.
 */
export function createKeyStore(db: DatabasePort, secrets: SecretBoxPort, clock: ClockPort) {
  let publicKeys: { keys: JWK[]; loadedAt: number } | null = null;
  let signing: SigningKey | null = null;

  const loadPublic = async () => {
    const rows = await db.query<{ public_jwk: JWK }>(sql`SELECT public_jwk FROM oauth_keys WHERE retired_at IS NULL ORDER BY created_at DESC, kid`);
    publicKeys = { keys: rows.map((r) => r.public_jwk), loadedAt: clock.now().getTime() };
    return publicKeys.keys;
  };

  const rotate = async (): Promise<string> => {
    const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
    const kid = crypto.randomUUID();
    const pub = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
    const priv = await secrets.seal(JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: ALG }));
    await db.query(sql`
      INSERT INTO oauth_keys (kid, alg, private_jwk, public_jwk, created_at) VALUES (${kid}::text, ${ALG}::text, ${priv}::text, ${pub}::jsonb, ${clock.now()}::timestamptz)`);
    signing = null;
    publicKeys = null;
    return kid;
  };

  return {
    rotate,
    /** Make sure a key exists (start-up). */
    async ensure(): Promise<void> {
      const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM oauth_keys WHERE retired_at IS NULL`);
      if (!row?.n) await rotate();
    },
    async signingKey(): Promise<SigningKey> {
      if (signing) return signing;
      const [row] = await db.query<{ kid: string; private_jwk: string }>(sql`
        SELECT kid, private_jwk FROM oauth_keys WHERE retired_at IS NULL ORDER BY created_at DESC, kid LIMIT 1`);
      if (!row) throw new Error('oauth: no signing key');
      const jwk = JSON.parse(await secrets.open(row.private_jwk)) as JWK;
      signing = { kid: row.kid, key: (await importJWK(jwk, ALG)) as CryptoKey };
      return signing;
    },
    /** Public keys (JWKS); reloaded when older than `maxAgeMs` (an unknown kid asks with a small age). */
    async jwks(maxAgeMs = 60_000): Promise<{ keys: JWK[] }> {
      if (publicKeys && clock.now().getTime() - publicKeys.loadedAt < maxAgeMs) return { keys: publicKeys.keys };
      return { keys: await loadPublic() };
    },
  };
}

export type KeyStore = ReturnType<typeof createKeyStore>;
