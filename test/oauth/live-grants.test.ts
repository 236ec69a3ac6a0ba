/**
 * Built-in access tokens name their grant; each instance remembers grants it found live
 * (plugins/oauth/live-grants.ts), and a revocation reaches every instance through NOTIFY
 * (trigger, migration 002). Two instances share one schema and one issuer; a token is verified on
 * both, so both remember its grant, then the grant is revoked on A as /revoke does. B must refuse
 * the token within one second: the acceptance criterion of the issue, polled.
 */
import { defaultIds } from '../../core/ports/ids.ts';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SignJWT } from 'jose';
import { Auth, type AuthPort } from '../../core/ports/auth.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Database, type DatabasePort } from '../../core/ports/database.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { sql } from '../../core/sql.ts';
import auth from '../../plugins/auth/index.ts';
import { createOrganization, createUser } from '../../plugins/auth/store.ts';
import oauth from '../../plugins/oauth/index.ts';
import { createKeyStore } from '../../plugins/oauth/keys.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import { revokeGrant } from '../../plugins/oauth/store.ts';
import { deploy, forEachAdapter, type Deployed } from '../support/deploy.ts';

const BASE = 'http://127.0.0.1:9';

forEachAdapter('live grants', (adapter) =>
  describe(`live grants across two instances [${adapter}]`, () => {
    let a: Deployed;
    let b: Deployed;
    let authA: AuthPort;
    let authB: AuthPort;
    let dbA: DatabasePort;
    beforeAll(async () => {
      const env = { PUBLIC_URL: BASE };
      a = await deploy(adapter, [auth(), oauth(), rateLimit({ pruneIntervalMs: 0 })], { env });
      b = await deploy(adapter, [auth(), oauth(), rateLimit({ pruneIntervalMs: 0 })], { env, schema: a.schema! });
      [authA, authB, dbA] = [a.deployment.get(Auth), b.deployment.get(Auth), a.deployment.get(Database)];
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    /** A user of a member organization, a live grant of theirs and an access token naming it. */
    async function grantAndToken(): Promise<{ grant: string; token: string }> {
      const org = await createOrganization(dbA, defaultIds, { name: `perfauth-grants-${process.pid}-${crypto.randomUUID()}`, tier: 'member' });
      const user = await createUser(dbA, defaultIds, { orgId: org.id, name: 'Granted' });
      const client = `client-${crypto.randomUUID()}`;
      await dbA.query(sql`
        INSERT INTO oauth_clients (client_id, redirect_uris, token_endpoint_auth_method, grant_types, created_at)
        VALUES (${client}::text, ${['http://127.0.0.1/cb']}::text[], 'none', ${['authorization_code']}::text[], now())`);
      const grant = crypto.randomUUID();
      await dbA.query(sql`INSERT INTO oauth_grants (id, client_id, user_id, created_at) VALUES (${grant}::uuid, ${client}::text, ${user.id}::uuid, now())`);
      const key = await createKeyStore(dbA, a.deployment.get(SecretBox), a.deployment.get(Clock)).signingKey();
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ sid: grant, client_id: client })
        .setProtectedHeader({ alg: 'ES256', kid: key.kid })
        .setIssuer(BASE)
        .setSubject(user.id)
        .setAudience(`${BASE}/api`)
        .setIssuedAt(now - 10)
        .setExpirationTime(now + 300)
        .sign(key.key);
      return { grant, token };
    }

    test('a grant found live is remembered: a revocation made without announcing it is not seen', async () => {
      const { grant, token } = await grantAndToken();
      expect((await authB.authenticate(token))?.kind).toBe('oauth');
      await dbA.transaction(async (tx) => {
        await tx.query(sql`SET LOCAL session_replication_role = replica`);
        await tx.query(sql`UPDATE oauth_grants SET revoked_at = now() WHERE id = ${grant}::uuid`);
      });
      expect((await authB.authenticate(token))?.kind).toBe('oauth');
    });

    test('a grant revoked on A ends its access tokens on B within one second', async () => {
      const { grant, token } = await grantAndToken();
      expect([(await authA.authenticate(token))?.tier, (await authB.authenticate(token))?.tier]).toEqual(['member', 'member']);
      await revokeGrant(dbA, grant, 'revoked', new Date());
      const deadline = performance.now() + 1000;
      while ((await authB.authenticate(token)) !== null && performance.now() < deadline) await Bun.sleep(5);
      expect(await authB.authenticate(token)).toBeNull();
    });
  }),
);
