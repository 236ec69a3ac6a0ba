import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { PublicJwk } from '../../core/ports/signer.ts';
import { createJwksResolver as createResolver, type JwksCache, type TrustedSigner } from '../../lib/rfc9421/jwks-resolver.ts';

/** Sender JWKS documents in `webhook_jwks_cache`. */
function jwksCache(db: Queryable): JwksCache {
  return {
    async get(source) {
      const [row] = await db.query<{ jwks: { keys: PublicJwk[] }; fetched_at: Date }>(
        sql`SELECT jwks, fetched_at FROM webhook_jwks_cache WHERE source = ${source}::text`,
      );
      return row ? { keys: row.jwks.keys, fetchedAt: new Date(row.fetched_at) } : null;
    },
    async put(source, keys, fetchedAt) {
      await db.query(sql`INSERT INTO webhook_jwks_cache (source, jwks, fetched_at) VALUES (${source}::text, ${{ keys }}::jsonb, ${fetchedAt}::timestamptz)
        ON CONFLICT (source) DO UPDATE SET jwks = EXCLUDED.jwks, fetched_at = EXCLUDED.fetched_at`);
    },
  };
}

/** Webhook senders' keys through brand.json -> jwks_uri (`{ns}_use: "webhook-signing"`), cached in this plugin's table. */
export function createJwksResolver(
  deps: { db: Queryable; clock: ClockPort; crawler: CrawlerPort; namespace: string },
  senders: readonly TrustedSigner[],
  options: { refetchSeconds?: number; ttlSeconds?: number; requireHttps?: boolean } = {},
) {
  return createResolver({ cache: jwksCache(deps.db), clock: deps.clock, crawler: deps.crawler, namespace: deps.namespace }, senders, {
    ...options,
    purpose: 'webhook-signing',
  });
}
