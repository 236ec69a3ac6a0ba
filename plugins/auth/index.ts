import * as v from 'valibot';
import { timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Auth, type AuthPort, type Principal } from '../../core/ports/auth.ts';
import { hashKey, principalForKey } from './store.ts';

const testToken = v.object({
  /** The bearer value; at least 16 characters. */
  token: v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters')),
  /** Shown as the principal's organization. */
  name: v.optional(v.string(), 'test'),
  tier: v.optional(v.picklist(['public', 'member', 'admin']), 'member'),
});

const options = v.object({
  /** Fixed bearer tokens accepted besides API keys (test agents, local development). */
  testTokens: v.optional(v.array(testToken), []),
});

/**
 * Minimal auth: organization API keys (stored as SHA-256 hashes) and optional configured test
 * tokens, both resolved from `Authorization: Bearer`.
 */
export default definePlugin({
  name: 'auth',
  provides: [Auth],
  requires: [Database],
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  register(ctx) {
    const db = ctx.get(Database);
    const tokens = ctx.options.testTokens.map((t) => ({ hash: hashKey(t.token), ...t }));
    const port: AuthPort = {
      async authenticate(bearer: string): Promise<Principal | null> {
        if (bearer.length > 512) return null;
        const hash = hashKey(bearer);
        // Compare digests (fixed length) in constant time; every configured token is checked.
        let match: (typeof tokens)[number] | undefined;
        for (const t of tokens) if (timingSafeEqual(hash, t.hash)) match = t;
        if (match) {
          // A stable UUID derived from the token, so ownership columns typed uuid accept it.
          const h = match.hash.toString('hex');
          const orgId = `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
          return { id: `test:${orgId}`, orgId, orgName: match.name, tier: match.tier, kind: 'test_token' };
        }
        return principalForKey(db, bearer);
      },
    };
    ctx.provide(Auth, port);
  },
});
