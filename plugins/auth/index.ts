import * as v from 'valibot';
import { timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Auth, type AuthPort, type Principal } from '../../core/ports/auth.ts';
import { Clock } from '../../core/ports/clock.ts';
import { TokenVerifier } from '../../core/ports/token-verifier.ts';
import { derivedUuid, hashKey, linkedPrincipal, principalForKey, touchApiKey, unlinkedPrincipal } from './store.ts';
import { CredentialCache } from './credential-cache.ts';

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
 * `Authorization: Bearer`. Database lookups are cached per instance and dropped on every
 * instance when a change to keys, organizations, users or identities commits (NOTIFY).
 */
export default definePlugin({
  name: 'auth',
  provides: [Auth],
  deps: { db: Database, clock: Clock, verifier: optional(TokenVerifier) },
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, verifier }, kernel) {
    // A stable UUID derived from each token, so ownership columns typed uuid accept it.
    const tokens = kernel.options.testTokens.map((t) => {
      const hash = hashKey(t.token);
      const orgId = derivedUuid(hash);
      const principal: Principal = { id: `test:${orgId}`, orgId, orgName: t.name, tier: t.tier, kind: 'test_token' };
      return { hash, principal };
    });
    // When this instance last recorded each key's use: skips the UPDATE on most requests.
    const touched = new Map<string, number>();
    const cache = new CredentialCache();
    const port: AuthPort = {
      async authenticate(bearer: string, resource?: string): Promise<Principal | null> {
        // OAuth access tokens (JWTs) go to the verifier; the principal's standing comes from our users.
        if (verifier?.handles(bearer)) {
          if (bearer.length > 8192) return null;
          const identity = await verifier.verify(bearer, resource);
          if (!identity) return null;
          const cacheKey = `identity:${identity.builtIn ? 'own' : 'external'}:${identity.issuer}\n${identity.subject}`;
          const linked = await cache.get(cacheKey, async () => {
            const principal = await linkedPrincipal(db, identity);
            return principal && { principal };
          });
          if (linked) return linked.principal;
          return identity.builtIn ? null : unlinkedPrincipal(identity);
        }
        if (bearer.length > 512) return null;
        const hash = hashKey(bearer);
        // Compare digests (fixed length) in constant time; every configured token is checked.
        let match: (typeof tokens)[number] | undefined;
        for (const t of tokens) if (timingSafeEqual(hash, t.hash)) match = t;
        // Principals are read-only: each token's is built once.
        if (match) return match.principal;
        // Keyed by the digest, like the index probe: lookup timing says nothing usable about stored keys.
        const found = await cache.get(`key:${hash.toString('hex')}`, () => principalForKey(db, hash));
        if (!found) return null;
        const now = clock.now();
        const keyId = found.keyId!;
        if (now.getTime() - (touched.get(keyId) ?? Number.NEGATIVE_INFINITY) >= 60_000) {
          if (touched.size > 10_000) touched.clear(); // bounded: forgetting only costs one UPDATE
          touched.set(keyId, now.getTime());
          await touchApiKey(db, keyId, now);
        }
        return found.principal;
      },
    };
    kernel.provide(Auth, port);
    let unfollow: (() => Promise<void>) | undefined;
    return {
      async start() {
        unfollow = await cache.follow(db, kernel.logger);
      },
      stop: () => unfollow?.(),
    };
  },
});
