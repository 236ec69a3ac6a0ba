/**
 * Credentials are cached per instance (plugins/auth/credential-cache.ts) and every change that
 * alters what a credential resolves to reaches every instance through NOTIFY (triggers, migration
 * 003). Two instances share one schema; each credential is first resolved on both, so both hold
 * it, then changed through the admin code path on instance A. Instance B must follow within one
 * second: the acceptance criterion of the issue, polled, not a speed measurement.
 */
import { defaultIds } from '../../core/ports/ids.ts';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Auth, type AuthPort, type Principal } from '../../core/ports/auth.ts';
import { Database, type DatabasePort } from '../../core/ports/database.ts';
import { TokenVerifier, type TokenVerifierPort, type VerifiedIdentity } from '../../core/ports/token-verifier.ts';
import { sql } from '../../core/sql.ts';
import auth from '../../plugins/auth/index.ts';
import { createApiKey, createOrganization, createUser, hashKey, linkIdentity, revokeApiKey, setOrganizationTier } from '../../plugins/auth/store.ts';
import { DATABASE_URL } from '../support/db.ts';
import { deploy, forEachAdapter, type Deployed } from '../support/deploy.ts';
import { withinOneSecond } from '../support/poll.ts';

const ISSUER = 'https://idp.example';
/** Stands in for plugins/oauth: `jwt.<subject>` is a valid access token of an external issuer. */
const verifier: TokenVerifierPort = {
  issuer: ISSUER,
  issuerFor: () => ISSUER,
  handles: (bearer) => bearer.startsWith('jwt.'),
  verify: async (bearer): Promise<VerifiedIdentity> => ({ issuer: ISSUER, subject: bearer.slice(4), builtIn: false }),
  resourceMetadataUrl: () => '',
  securityScheme: () => ({}),
};

let n = 0;
async function newOrgKey(db: DatabasePort, tier: 'public' | 'member' | 'admin' = 'member') {
  const org = await createOrganization(db, defaultIds, { name: `perfauth-cache-${process.pid}-${n++}`, tier });
  return { org, ...(await createApiKey(db, defaultIds, { orgId: org.id, name: 'cache-test' })) };
}

forEachAdapter('credential cache', (adapter) =>
  describe(`credential cache across two instances [${adapter}]`, () => {
    let a: Deployed;
    let b: Deployed;
    let authA: AuthPort;
    let authB: AuthPort;
    let dbA: DatabasePort;
    beforeAll(async () => {
      a = await deploy(adapter, [auth()], { overrides: [[TokenVerifier, verifier]] });
      b = await deploy(adapter, [auth()], { schema: a.schema!, overrides: [[TokenVerifier, verifier]] });
      [authA, authB, dbA] = [a.deployment.get(Auth), b.deployment.get(Auth), a.deployment.get(Database)];
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    const onBoth = async (credential: string): Promise<[Principal | null, Principal | null]> => [
      await authA.authenticate(credential),
      await authB.authenticate(credential),
    ];

    test('a key is answered from the cache: a change made without announcing it is not seen', async () => {
      const { id, key } = await newOrgKey(dbA);
      expect((await onBoth(key)).map((p) => p?.kind)).toEqual(['api_key', 'api_key']);
      // Triggers off for this transaction (superuser): the revocation is silent.
      await dbA.transaction(async (tx) => {
        await tx.query(sql`SET LOCAL session_replication_role = replica`);
        await tx.query(sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${id}::uuid`);
      });
      expect(await authB.authenticate(key)).toMatchObject({ kind: 'api_key' });
    });

    test('a key revoked on A is refused on B within one second', async () => {
      const { id, key } = await newOrgKey(dbA);
      expect((await onBoth(key)).map((p) => p?.kind)).toEqual(['api_key', 'api_key']);
      expect(await revokeApiKey(dbA, id)).toBe(true);
      expect(await withinOneSecond(async () => (await authB.authenticate(key)) === null)).toBe(true);
      expect(await withinOneSecond(async () => (await authA.authenticate(key)) === null)).toBe(true);
    });

    test("an organization's tier changed on A is the principal's tier on B within one second", async () => {
      const { org, key } = await newOrgKey(dbA, 'member');
      expect((await onBoth(key)).map((p) => p?.tier)).toEqual(['member', 'member']);
      expect(await setOrganizationTier(dbA, org.id, 'admin')).toBe(true);
      expect(await withinOneSecond(async () => (await authB.authenticate(key))?.tier === 'admin')).toBe(true);
      expect(await withinOneSecond(async () => (await authA.authenticate(key))?.tier === 'admin')).toBe(true);
    });

    test('a key created on A works on B at once, even though B just refused it', async () => {
      const org = await createOrganization(dbA, defaultIds, { name: `perfauth-cache-${process.pid}-${n++}`, tier: 'member' });
      const key = `proto_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')}`;
      expect(await onBoth(key)).toEqual([null, null]); // both remember the miss
      await dbA.query(sql`
        INSERT INTO api_keys (id, org_id, name, prefix, key_hash)
        VALUES (${crypto.randomUUID()}::uuid, ${org.id}::uuid, 'late', 'proto_', ${hashKey(key)}::bytea)`);
      expect(await withinOneSecond(async () => (await authB.authenticate(key))?.orgId === org.id)).toBe(true);
    });

    test("an OAuth subject linked to a user on A gets that user's standing on B within one second; its tier follows", async () => {
      const token = `jwt.subject-${process.pid}-${n++}`;
      expect((await onBoth(token)).map((p) => p?.tier)).toEqual(['public', 'public']); // unlinked: no standing
      const org = await createOrganization(dbA, defaultIds, { name: `perfauth-cache-${process.pid}-${n++}`, tier: 'member' });
      const user = await createUser(dbA, defaultIds, { orgId: org.id, name: 'Linked' });
      await linkIdentity(dbA, { issuer: ISSUER, subject: token.slice(4), userId: user.id });
      expect(await withinOneSecond(async () => (await authB.authenticate(token))?.userId === user.id)).toBe(true);
      expect((await authB.authenticate(token))?.tier).toBe('member');
      await setOrganizationTier(dbA, org.id, 'public');
      expect(await withinOneSecond(async () => (await authB.authenticate(token))?.tier === 'public')).toBe(true);
    });

    if (adapter === 'postgres')
      test('the admin CLI, a third process, revokes and re-tiers: both instances follow within one second', async () => {
        const { org, key } = await newOrgKey(dbA, 'member');
        const other = await newOrgKey(dbA, 'member');
        expect((await onBoth(key)).map((p) => p?.tier)).toEqual(['member', 'member']);
        expect((await onBoth(other.key)).map((p) => p?.tier)).toEqual(['member', 'member']);
        const admin = async (...args: string[]) => {
          const proc = Bun.spawn(['bun', join(import.meta.dir, '../../scripts/admin.ts'), ...args], {
            env: { ...process.env, DATABASE_URL: DATABASE_URL!, DATABASE_SCHEMA: a.schema! },
            stdout: 'pipe',
            stderr: 'pipe',
          });
          expect(await proc.exited).toBe(0);
          return new Response(proc.stdout).text();
        };
        expect(await admin('set-tier', org.name, 'admin')).toContain('member -> admin');
        expect(await withinOneSecond(async () => (await onBoth(key)).every((p) => p?.tier === 'admin'))).toBe(true);
        expect(await admin('revoke-key', other.id)).toContain(`revoked ${other.id}`);
        expect(await withinOneSecond(async () => (await onBoth(other.key)).every((p) => p === null))).toBe(true);
      });
  }),
);
