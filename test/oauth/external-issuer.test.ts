import { defaultIds } from '../../core/ports/ids.ts';
import { afterAll, expect, test } from 'bun:test';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { Database } from '../../core/ports/database.ts';
import auth from '../../plugins/auth/index.ts';
import oauthPlugin from '../../plugins/oauth/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { createOrganization, createUser, linkIdentity } from '../../plugins/auth/store.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { TEST_CERT, TEST_KEY, loopbackResolver } from '../support/loopback.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

/** A stand-in OpenID Connect provider on loopback TLS: discovery and a JWKS whose keys the test rotates. */
const keys: Array<{ kid: string; privateKey: CryptoKey; jwk: Record<string, unknown> }> = [];
const addKey = async () => {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const kid = `k${keys.length + 1}`;
  keys.push({ kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } });
  return keys[keys.length - 1]!;
};
await addKey();
let jwksHits = 0;
const idp: ReturnType<typeof Bun.serve> = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  tls: { cert: TEST_CERT, key: TEST_KEY },
  fetch(req): Response {
    const url = new URL(req.url);
    if (url.pathname === '/.well-known/openid-configuration') return Response.json({ issuer: ISSUER, jwks_uri: `${ISSUER}/keys` });
    if (url.pathname === '/keys') {
      jwksHits++;
      return Response.json({ keys: keys.map((k) => k.jwk) });
    }
    return new Response('not found', { status: 404 });
  },
});
const ISSUER: string = `https://idp.pub.test:${idp.port}`;
afterAll(() => idp.stop(true));

const mint = (key: (typeof keys)[number], claims: { sub: string; aud?: string }) =>
  new SignJWT({ email: `${claims.sub}@idp.example` })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid })
    .setIssuer(ISSUER)
    .setSubject(claims.sub)
    .setAudience(claims.aud ?? 'registry-api')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key.privateKey);

forEachDatabase(
  'oauth external issuer',
  (adapter, schema) =>
    startServer(adapter, schema, [
      auth(),
      crawlerHttp({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test']), ca: TEST_CERT }),
      oauthPlugin({ issuer: ISSUER, audiences: ['registry-api'] }),
      rateLimit(),
      registryBrands(),
      restHost(),
    ]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();
    const save = async (token: string) =>
      (await s().fetch('/api/brands/save', { method: 'POST', token, json: { domain: 'idp-user.example', brand_name: 'IdP' } })).status;

    test("the issuer's tokens identify users; standing comes from the linked user; keys rotate", async () => {
      // No built-in authorization server in this mode; the resource metadata names the external issuer.
      expect((await s().fetch('/register', { method: 'POST', json: {} })).status).toBe(404);
      const pr = await (await s().fetch('/.well-known/oauth-protected-resource/api')).json();
      expect(pr.authorization_servers).toEqual([ISSUER]);

      // Authenticated but linked to no user: no standing.
      expect(await save(await mint(keys[0]!, { sub: 'alice' }))).toBe(403);
      const db = s().deployment.get(Database);
      const org = await createOrganization(db, defaultIds, { name: `idp-org-${Date.now()}-${Math.random()}`, tier: 'member' });
      const user = await createUser(db, defaultIds, { orgId: org.id, name: 'Alice' });
      await linkIdentity(db, { issuer: ISSUER, subject: 'alice', userId: user.id });
      // The cached "no standing" is dropped when the change's NOTIFY arrives (asynchronously on Postgres).
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = await save(await mint(keys[0]!, { sub: 'alice' }));
        if (status !== 200) await Bun.sleep(20);
      }
      expect(status).toBe(200);

      expect(await save(await mint(keys[0]!, { sub: 'alice', aud: 'someone-else' }))).toBe(401);
      // The provider rotates to a new key: the first token signed with it triggers one JWKS reload.
      const before = jwksHits;
      const rotated = await addKey();
      expect(await save(await mint(rotated, { sub: 'alice' }))).toBe(200);
      expect(jwksHits).toBe(before + 1);
      // A key the provider never published stays unknown.
      const stranger = await generateKeyPair('RS256');
      expect(await save(await mint({ kid: 'k99', privateKey: stranger.privateKey, jwk: {} }, { sub: 'alice' }))).toBe(401);
    });
  },
);
