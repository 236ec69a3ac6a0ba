import { expect, test } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { SignJWT, generateKeyPair } from 'jose';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { sql } from '../../core/sql.ts';
import auth from '../../plugins/auth/index.ts';
import oauthPlugin from '../../plugins/oauth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import restHost from '../../hosts/rest/index.ts';
import mcpEndpoints from '../../hosts/mcp-endpoints/index.ts';
import { createKeyStore } from '../../plugins/oauth/keys.ts';
import { forEachDatabase } from '../support/db.ts';
import type { TestServer } from '../support/server.ts';
import { newUser, signIn, startAt } from './support.ts';

const insecure = { [oauth.allowInsecureRequests]: true };
const REDIRECT = 'http://127.0.0.1:9/callback';

forEachDatabase(
  'oauth 2.1',
  (adapter, schema) => startAt(adapter, schema, [auth(), oauthPlugin(), rateLimit(), registryBrands(), restHost(), mcpEndpoints()]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();

    /** Register a public client, sign in through the page and exchange the code (oauth4webapi end to end). */
    async function signedIn(login: string, password: string) {
      const issuer = new URL(s().base);
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
      const client = (await oauth.processDynamicClientRegistrationResponse(
        await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Test CLI' }, insecure),
      )) as oauth.Client;
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        resource: `${s().base}/api`,
      }).toString();
      const callback = await signIn(url.toString(), login, password);
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure),
      );
      return { as, client, tokens };
    }

    test('discovery: RFC 8414 and RFC 9728 metadata; 401s point at the resource metadata', async () => {
      const meta = await (await s().fetch('/.well-known/oauth-authorization-server')).json();
      expect(meta).toMatchObject({
        issuer: s().base,
        registration_endpoint: `${s().base}/register`,
        code_challenge_methods_supported: ['S256'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
      });
      for (const path of ['/api', '/mcp']) {
        const pr = await (await s().fetch(`/.well-known/oauth-protected-resource${path}`)).json();
        expect(pr).toMatchObject({ resource: s().base + path, authorization_servers: [s().base], bearer_methods_supported: ['header'] });
      }
      const rest = await s().fetch('/api/brands/save', { method: 'POST', json: { domain: 'x.example', brand_name: 'X' } });
      expect(rest.status).toBe(401);
      expect(rest.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${s().base}/.well-known/oauth-protected-resource/api"`);
      const mcp = await s().fetch('/mcp', {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream' },
        json: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'save_brand', arguments: {} } },
      });
      expect(mcp.status).toBe(401);
      expect(mcp.headers.get('www-authenticate')).toContain(`resource_metadata="${s().base}/.well-known/oauth-protected-resource/mcp"`);
    });

    test('oauth4webapi: register, sign in, exchange; one token on REST and /mcp; refresh rotates; reuse revokes; revocation', async () => {
      const user = await newUser(s(), 'member');
      const { as, client, tokens } = await signedIn(user.login, user.password);
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.expires_in).toBe(600);

      const saved = await s().fetch('/api/brands/save', {
        method: 'POST',
        token: tokens.access_token,
        json: { domain: 'oauth-save.example', brand_name: 'Saved by a user' },
      });
      expect(saved.status).toBe(200);
      const history = await (await s().fetch('/api/brands/history?domain=oauth-save.example')).json();
      expect(history.revisions[0].editor_name).toMatch(/^User \d+$/);

      const mcp = new McpClient({ name: 'oauth-test', version: '1.0.0' });
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(`${s().base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } } }),
      );
      const result = (await mcp.callTool({ name: 'save_brand', arguments: { domain: 'oauth-mcp.example', brand_name: 'Via MCP' } })) as any;
      expect(result.isError).toBeUndefined();
      expect(result.structuredContent).toMatchObject({ success: true, domain: 'oauth-mcp.example' });
      await mcp.close();

      // Refresh rotates the refresh token; the old one presented again revokes the whole grant.
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
      );
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      expect(
        (await s().fetch('/api/brands/save', { method: 'POST', token: refreshed.access_token, json: { domain: 'oauth-save.example', brand_name: 'Again' } }))
          .status,
      ).toBe(200);
      const reuse = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure);
      await expect(oauth.processRefreshTokenResponse(as, client, reuse)).rejects.toMatchObject({ error: 'invalid_grant' });
      expect(
        (await s().fetch('/api/brands/save', { method: 'POST', token: refreshed.access_token, json: { domain: 'oauth-save.example', brand_name: 'Late' } }))
          .status,
      ).toBe(401);
      const after = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token!, insecure);
      await expect(oauth.processRefreshTokenResponse(as, client, after)).rejects.toMatchObject({ error: 'invalid_grant' });

      // A fresh sign-in, then revocation (RFC 7009) of its refresh token ends its access tokens too.
      const second = await signedIn(user.login, user.password);
      expect(
        (
          await s().fetch('/api/brands/save', {
            method: 'POST',
            token: second.tokens.access_token,
            json: { domain: 'oauth-save.example', brand_name: 'Second' },
          })
        ).status,
      ).toBe(200);
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, second.client, oauth.None(), second.tokens.refresh_token!, insecure));
      expect(
        (
          await s().fetch('/api/brands/save', {
            method: 'POST',
            token: second.tokens.access_token,
            json: { domain: 'oauth-save.example', brand_name: 'Revoked' },
          })
        ).status,
      ).toBe(401);
    });

    test('a code is single use; PKCE and redirect_uri are checked; a wrong password is refused', async () => {
      const user = await newUser(s(), 'member');
      const issuer = new URL(s().base);
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
      const client = (await oauth.processDynamicClientRegistrationResponse(
        await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }, insecure),
      )) as oauth.Client;
      const verifier = oauth.generateRandomCodeVerifier();
      const query = {
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      };
      const url = `${as.authorization_endpoint}?${new URLSearchParams(query)}`;

      // plain PKCE is refused (redirected back with an error); an unregistered redirect_uri is shown, not followed.
      const plain = await fetch(`${as.authorization_endpoint}?${new URLSearchParams({ ...query, code_challenge_method: 'plain' })}`, { redirect: 'manual' });
      expect(new URL(plain.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
      const foreign = await fetch(`${as.authorization_endpoint}?${new URLSearchParams({ ...query, redirect_uri: 'https://evil.example/cb' })}`, {
        redirect: 'manual',
      });
      expect(foreign.status).toBe(400);
      expect(foreign.headers.get('location')).toBeNull();

      const page = await (await fetch(url)).text();
      const form = new URLSearchParams({ ...query, login: user.login, password: 'wrong password!', decision: 'allow' });
      const wrong = await fetch(as.authorization_endpoint!, { method: 'POST', body: form, redirect: 'manual' });
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).toContain('Unknown user name or wrong password');
      expect(page).toContain('Sign in to the registry');

      const denied = await signIn(url, user.login, user.password, 'deny');
      expect(denied.searchParams.get('error')).toBe('access_denied');

      const callback = await signIn(url, user.login, user.password);
      const code = callback.searchParams.get('code')!;
      const token = (body: Record<string, string>) =>
        fetch(as.token_endpoint!, {
          method: 'POST',
          body: new URLSearchParams({ grant_type: 'authorization_code', client_id: client.client_id, redirect_uri: REDIRECT, ...body }),
        });
      const badVerifier = await token({ code, code_verifier: oauth.generateRandomCodeVerifier() });
      expect(badVerifier.status).toBe(400);
      expect((await badVerifier.json()).error).toBe('invalid_grant');
      const ok = await token({ code, code_verifier: verifier });
      expect(ok.status).toBe(200);
      const { access_token } = await ok.json();
      // Replaying the code fails and revokes what it gave.
      expect((await token({ code, code_verifier: verifier })).status).toBe(400);
      expect((await s().fetch('/api/brands/save', { method: 'POST', token: access_token, json: { domain: 'replay.example', brand_name: 'R' } })).status).toBe(
        401,
      );
    });

    test('tokens of another audience, expired, or signed by an unknown key are 401; a user without standing is 403', async () => {
      const member = await newUser(s(), 'member');
      const db = s().deployment.get(Database);
      const keys = createKeyStore(db, s().deployment.get(SecretBox), s().deployment.get(Clock));
      const key = await keys.signingKey();
      // A grant for the minted tokens (built-in tokens name their grant).
      const [client] = await db.query<{ client_id: string }>(sql`SELECT client_id FROM oauth_clients LIMIT 1`);
      const grant = crypto.randomUUID();
      await db.query(
        sql`INSERT INTO oauth_grants (id, client_id, user_id, created_at) VALUES (${grant}::uuid, ${client!.client_id}::text, ${member.userId}::uuid, now())`,
      );
      const now = Math.floor(Date.now() / 1000);
      const mint = (claims: { aud?: string; exp?: number }, signer: { kid: string; key: CryptoKey } = key) =>
        new SignJWT({ sid: grant, client_id: client!.client_id })
          .setProtectedHeader({ alg: 'ES256', kid: signer.kid })
          .setIssuer(s().base)
          .setSubject(member.userId)
          .setAudience(claims.aud ?? `${s().base}/api`)
          .setIssuedAt(now - 10)
          .setExpirationTime(claims.exp ?? now + 300)
          .sign(signer.key);
      const save = async (token: string) =>
        (await s().fetch('/api/brands/save', { method: 'POST', token, json: { domain: 'audience.example', brand_name: 'A' } })).status;

      expect(await save(await mint({}))).toBe(200); // the same construction is accepted when valid
      expect(await save(await mint({ aud: `${s().base}/mcp` }))).toBe(200);
      expect(await save(await mint({ aud: 'https://other.example/api' }))).toBe(401);
      expect(await save(await mint({ exp: now - 60 }))).toBe(401);
      const stranger = await generateKeyPair('ES256');
      expect(await save(await mint({}, { kid: key.kid, key: stranger.privateKey }))).toBe(401);
      expect(await save(await mint({}, { kid: 'unknown-kid', key: stranger.privateKey }))).toBe(401);

      const outsider = await newUser(s(), 'public');
      const { tokens } = await signedIn(outsider.login, outsider.password);
      const denied = await s().fetch('/api/brands/save', { method: 'POST', token: tokens.access_token, json: { domain: 'standing.example', brand_name: 'S' } });
      expect(denied.status).toBe(403);
      expect((await denied.json()).error).toBe('permission_denied');
    });

    test('the MCP SDK client signs in through its OAuth support and calls tools', async () => {
      const user = await newUser(s(), 'member');
      let saved: { client?: OAuthClientInformationMixed; tokens?: OAuthTokens; verifier?: string; code?: string } = {};
      const provider: OAuthClientProvider = {
        get redirectUrl() {
          return REDIRECT;
        },
        get clientMetadata(): OAuthClientMetadata {
          return {
            redirect_uris: [REDIRECT],
            client_name: 'MCP SDK test',
            token_endpoint_auth_method: 'none',
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
          };
        },
        clientInformation: () => saved.client,
        saveClientInformation: (info) => void (saved.client = info),
        tokens: () => saved.tokens,
        saveTokens: (t) => void (saved.tokens = t),
        async redirectToAuthorization(url) {
          // The "browser": sign in on the page and keep the code the redirect carries.
          saved.code = (await signIn(url.toString(), user.login, user.password)).searchParams.get('code')!;
        },
        saveCodeVerifier: (v) => void (saved.verifier = v),
        codeVerifier: () => saved.verifier!,
      };
      const url = new URL(`${s().base}/mcp`);
      const client = new McpClient({ name: 'oauth-sdk', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('save_brand');
      const first = client.callTool({ name: 'save_brand', arguments: { domain: 'sdk-oauth.example', brand_name: 'SDK' } });
      await expect(first).rejects.toBeInstanceOf(UnauthorizedError);
      expect(saved.code).toBeString();
      await transport.finishAuth(saved.code!);
      expect(saved.tokens?.access_token).toBeString();
      const second = (await client.callTool({ name: 'save_brand', arguments: { domain: 'sdk-oauth.example', brand_name: 'SDK' } })) as any;
      expect(second.structuredContent).toMatchObject({ success: true, domain: 'sdk-oauth.example' });
      await client.close();
      saved = {};
    });
  },
);
