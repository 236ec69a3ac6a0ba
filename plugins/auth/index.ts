import * as v from 'valibot';
import { timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Auth, type AuthPort, type Principal } from '../../core/ports/auth.ts';
import { Clock } from '../../core/ports/clock.ts';
import { TokenVerifier } from '../../core/ports/token-verifier.ts';
import { derivedUuid, hashKey, principalForIdentity, principalForKey, touchApiKey } from './store.ts';

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
 * Minimal auth: organization API keys (stored as SHA-256 hashes), optional configured test tokens
 * and, when an OAuth plugin provides a TokenVerifier, user access tokens, all resolved from
 * `Authorization: Bearer`.
 */
export default definePlugin({
  name: 'auth',
  provides: [Auth],
  deps: { db: Database, clock: Clock, verifier: optional(TokenVerifier) },
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, verifier }, kernel) {
    const tokens = kernel.options.testTokens.map((t) => ({ hash: hashKey(t.token), ...t }));
    // When this instance last recorded each key's use: skips the UPDATE on most requests.
    const touched = new Map<string, number>();
    const port: AuthPort = {
      async authenticate(bearer: string): Promise<Principal | null> {
        // OAuth access tokens (JWTs) go to the verifier; the principal's standing comes from our users.
        if (verifier?.handles(bearer)) {
          if (bearer.length > 8192) return null;
          const identity = await verifier.verify(bearer);
          return identity ? principalForIdentity(db, identity) : null;
        }
        if (bearer.length > 512) return null;
        const hash = hashKey(bearer);
        // Compare digests (fixed length) in constant time; every configured token is checked.
        let match: (typeof tokens)[number] | undefined;
        for (const t of tokens) if (timingSafeEqual(hash, t.hash)) match = t;
        if (match) {
          // A stable UUID derived from the token, so ownership columns typed uuid accept it.
          const orgId = derivedUuid(match.hash);
          return { id: `test:${orgId}`, orgId, orgName: match.name, tier: match.tier, kind: 'test_token' };
        }
        const found = await principalForKey(db, bearer);
        if (!found) return null;
        const now = clock.now();
        if (now.getTime() - (touched.get(found.keyId) ?? Number.NEGATIVE_INFINITY) >= 60_000) {
          if (touched.size > 10_000) touched.clear(); // bounded: forgetting only costs one UPDATE
          touched.set(found.keyId, now.getTime());
          await touchApiKey(db, found.keyId, now);
        }
        return found.principal;
      },
    };
    kernel.provide(Auth, port);
  },
});
