import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ReplayStore, RevocationCheck } from '../../lib/rfc9421/verify.ts';
import { createReplayStore as replayStoreIn } from '../../lib/rfc9421/replay-store.ts';

/** The (keyid, nonce) replay cache in the database: every receiver instance sees every nonce. */
export function createReplayStore(db: Queryable): ReplayStore {
  return replayStoreIn(db, 'webhook_replay_nonces');
}

export async function purgeReplayNonces(db: Queryable, now: Date): Promise<number> {
  return replayStoreIn(db, 'webhook_replay_nonces').purge(now);
}

/**
 * Revoked sender keys. `stale` when a revocation feed has been refreshed before but not within
 * `staleAfterSeconds` (its next_update plus grace): the receiver then refuses to verify.
 */
export function createRevocationList(
  db: Queryable,
  staleAfterSeconds = 7200,
): RevocationCheck & {
  replace(keyids: readonly string[], refreshedAt: Date): Promise<void>;
  revoke(keyid: string, at: Date): Promise<void>;
} {
  return {
    async status(keyid, now) {
      const [revoked] = await db.query(sql`SELECT 1 FROM webhook_key_revocations WHERE keyid = ${keyid}::text`);
      if (revoked) return 'revoked';
      const [refresh] = await db.query<{ refreshed_at: Date }>(sql`SELECT refreshed_at FROM webhook_revocation_refresh WHERE id = 1`);
      if (refresh && now.getTime() - new Date(refresh.refreshed_at).getTime() > staleAfterSeconds * 1000) return 'stale';
      return 'ok';
    },
    async replace(keyids, refreshedAt) {
      await db.query(sql`DELETE FROM webhook_key_revocations WHERE NOT (keyid = ANY(${[...keyids]}::text[]))`);
      await db.query(sql`INSERT INTO webhook_key_revocations (keyid, revoked_at)
        SELECT k, ${refreshedAt}::timestamptz FROM unnest(${[...keyids]}::text[]) AS k ON CONFLICT (keyid) DO NOTHING`);
      await db.query(sql`INSERT INTO webhook_revocation_refresh (id, refreshed_at) VALUES (1, ${refreshedAt}::timestamptz)
        ON CONFLICT (id) DO UPDATE SET refreshed_at = EXCLUDED.refreshed_at`);
    },
    async revoke(keyid, at) {
      await db.query(sql`INSERT INTO webhook_key_revocations (keyid, revoked_at) VALUES (${keyid}::text, ${at}::timestamptz) ON CONFLICT (keyid) DO NOTHING`);
    },
  };
}
