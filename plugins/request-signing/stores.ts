import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { PublicJwk } from '../../core/ports/signer.ts';
import type { RevocationCheck } from '../../lib/rfc9421/verify.ts';
import type { JwksCache } from '../../lib/rfc9421/jwks-resolver.ts';
import { createReplayStore } from '../../lib/rfc9421/replay-store.ts';

export const replayStore = (db: Queryable) => createReplayStore(db, 'request_signature_nonces');

/** Refused signing keys: a revoked keyid fails at step 9, before any cryptographic work. */
export function revocations(db: Queryable): RevocationCheck & { revoke(keyids: readonly string[], at: Date): Promise<void> } {
  return {
    async status(keyid) {
      const [row] = await db.query(sql`SELECT 1 FROM request_signature_revocations WHERE keyid = ${keyid}::text`);
      return row ? 'revoked' : 'ok';
    },
    async revoke(keyids, at) {
      await db.query(sql`INSERT INTO request_signature_revocations (keyid, revoked_at)
        SELECT k, ${at}::timestamptz FROM unnest(${[...keyids]}::text[]) AS k ON CONFLICT (keyid) DO NOTHING`);
    },
  };
}

/** Buyers' JWKS documents in `request_signing_jwks`. */
export function jwksCache(db: Queryable): JwksCache {
  return {
    async get(source) {
      const [row] = await db.query<{ jwks: { keys: PublicJwk[] }; fetched_at: Date }>(
        sql`SELECT jwks, fetched_at FROM request_signing_jwks WHERE source = ${source}::text`,
      );
      return row ? { keys: row.jwks.keys, fetchedAt: new Date(row.fetched_at) } : null;
    },
    async put(source, keys, fetchedAt) {
      await db.query(sql`INSERT INTO request_signing_jwks (source, jwks, fetched_at) VALUES (${source}::text, ${{ keys }}::jsonb, ${fetchedAt}::timestamptz)
        ON CONFLICT (source) DO UPDATE SET jwks = EXCLUDED.jwks, fetched_at = EXCLUDED.fetched_at`);
    },
  };
}
