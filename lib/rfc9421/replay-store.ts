import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ReplayStore } from './verify.ts';

/**
 * The (keyid, nonce) replay cache in a table of the verifying plugin, with columns
 * `(keyid text, nonce text, expires_at timestamptz, PRIMARY KEY (keyid, nonce))`: every instance
 * sees every nonce.
 */
export function createReplayStore(db: Queryable, table: string): ReplayStore & { purge(now: Date): Promise<number> } {
  if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`bad table name ${table}`);
  const t = sql.raw(table);
  return {
    async count(keyid, now) {
      const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${t} WHERE keyid = ${keyid}::text AND expires_at > ${now}::timestamptz`);
      return row?.n ?? 0;
    },
    async record(keyid, nonce, expiresAt, now) {
      // Insert, or take over an expired entry; a live entry makes this return no row (a replay).
      const rows = await db.query(sql`INSERT INTO ${t} (keyid, nonce, expires_at)
        VALUES (${keyid}::text, ${nonce}::text, ${expiresAt}::timestamptz)
        ON CONFLICT (keyid, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
        WHERE ${t}.expires_at <= ${now}::timestamptz
        RETURNING keyid`);
      return rows.length === 1;
    },
    async purge(now) {
      const rows = await db.query(sql`DELETE FROM ${t} WHERE expires_at <= ${now}::timestamptz RETURNING keyid`);
      return rows.length;
    },
  };
}
