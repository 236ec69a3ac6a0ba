import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import net from 'node:net';
import * as oauth from 'oauth4webapi';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { assemble } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { serve, type RunningServer } from '../../hosts/serve.ts';
import auth from '../../plugins/auth/index.ts';
import oauthPlugin from '../../plugins/oauth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import restHost from '../../hosts/rest/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import mcpEndpoints from '../../hosts/mcp-endpoints/index.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { dropSchema, forEachDatabase, storagePlugin, uniqueSchema } from '../support/db.ts';
import type { TestServer } from '../support/server.ts';
import { freePort, newUser, signIn, startAt } from './support.ts';

const insecure = { [oauth.allowInsecureRequests]: true };
const REDIRECT = 'http://127.0.0.1:9/callback';
const TASK = '01890000-0000-7000-8000-000000000000';

/** The registry (`/api`, `/mcp`) and two path-routed agent mounts, `/sales` and `/signals`, with OAuth. */
const plugins = () => [
  auth(),
  oauthPlugin(),
  rateLimit({ pruneIntervalMs: 0 }),
  tasks({ worker: false }),
  idempotency(),
  registryBrands(),
  restHost(),
  mcpEndpoints(),
  restTasks({ mounts: [{ prefix: '/sales' }, { prefix: '/signals' }] }),
  mcpHost({ mounts: [{ path: '/sales/mcp' }, { path: '/signals/mcp' }] }),
];

/** Register a public client at `base`, sign in through the page (naming `resources`) and exchange the code with oauth4webapi. */
async function signedIn(base: string, login: string, password: string, resources: string[]) {
  const issuer = new URL(base);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  const client = (await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }, insecure),
  )) as oauth.Client;
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });
  for (const r of resources) query.append('resource', r);
  url.search = query.toString();
  const callback = await signIn(url.toString(), login, password);
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure),
  );
  return { as, client, tokens, authorizeUrl: url };
}

/** The MCP SDK client's OAuth flow against `url`: it discovers, registers, signs in (through our page) and calls get_task_status. */
async function mcpSdkCall(url: string, login: string, password: string) {
  const saved: { client?: OAuthClientInformationMixed; tokens?: OAuthTokens; verifier?: string; code?: string; resource?: string } = {};
  const provider: OAuthClientProvider = {
    redirectUrl: REDIRECT,
    clientMetadata: {
      redirect_uris: [REDIRECT],
      client_name: 'MCP SDK',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    },
    clientInformation: () => saved.client,
    saveClientInformation: (info) => void (saved.client = info),
    tokens: () => saved.tokens,
    saveTokens: (t) => void (saved.tokens = t),
    async redirectToAuthorization(authorization) {
      saved.resource = authorization.searchParams.get('resource') ?? undefined;
      saved.code = (await signIn(authorization.toString(), login, password)).searchParams.get('code')!;
    },
    saveCodeVerifier: (v) => void (saved.verifier = v),
    codeVerifier: () => saved.verifier!,
  };
  const call = (client: McpClient) => client.callTool({ name: 'get_task_status', arguments: { task_id: TASK } });
  const client = new McpClient({ name: 'oauth-resources', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport); // initialize and tools/list are public
  await expect(call(client)).rejects.toBeInstanceOf(UnauthorizedError);
  await transport.finishAuth(saved.code!);
  const result = (await call(client)) as { isError?: boolean; structuredContent?: unknown };
  await client.close();
  return { result, token: saved.tokens!.access_token, resource: saved.resource };
}

const rpc = (name: string, args: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

forEachDatabase(
  'oauth resources (RFC 8707 audiences per protected resource)',
  (adapter, schema) => startAt(adapter, schema, plugins()),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();
    /** Where the token is accepted (anything but 401: a 404 for an unknown task is an authenticated answer). */
    const statusWith = async (token: string) => {
      const all = await statuses(token);
      return Object.fromEntries(Object.entries(all).map(([k, status]) => [k, status === 401 ? 401 : 'ok']));
    };
    const statuses = async (token: string) => ({
      api: (await s().fetch('/api/brands/save', { method: 'POST', token, json: { domain: 'aud.example', brand_name: 'A' } })).status,
      registryMcp: (
        await s().fetch('/mcp', { method: 'POST', token, headers: MCP_HEADERS, json: rpc('save_brand', { domain: 'aud.example', brand_name: 'A' }) })
      ).status,
      salesTasks: (await s().fetch('/sales/tasks/get_task_status', { method: 'POST', token, json: { task_id: TASK } })).status,
      salesMcp: (await s().fetch('/sales/mcp', { method: 'POST', token, headers: MCP_HEADERS, json: rpc('get_task_status', { task_id: TASK }) })).status,
      signalsMcp: (await s().fetch('/signals/mcp', { method: 'POST', token, headers: MCP_HEADERS, json: rpc('get_task_status', { task_id: TASK }) })).status,
    });

    test('a registry token opens the registry only; an agent token opens its own mount only', async () => {
      const user = await newUser(s(), 'member');
      const registry = await signedIn(s().base, user.login, user.password, [`${s().base}/api`]);
      expect(await statusWith(registry.tokens.access_token)).toEqual({ api: 'ok', registryMcp: 'ok', salesTasks: 401, salesMcp: 401, signalsMcp: 401 });
      const byDefault = await signedIn(s().base, user.login, user.password, []);
      expect(await statusWith(byDefault.tokens.access_token)).toEqual({ api: 'ok', registryMcp: 'ok', salesTasks: 401, salesMcp: 401, signalsMcp: 401 });

      // The resource the agent's own RFC 9728 metadata names is accepted at /authorize.
      const pr = await (await s().fetch('/.well-known/oauth-protected-resource/sales/mcp')).json();
      expect(pr).toMatchObject({ resource: `${s().base}/sales/mcp`, authorization_servers: [s().base] });
      const sales = await signedIn(s().base, user.login, user.password, [pr.resource]);
      const claims = JSON.parse(Buffer.from(sales.tokens.access_token.split('.')[1]!, 'base64url').toString());
      expect(claims.aud).toEqual([`${s().base}/sales/mcp`]);
      expect(await statusWith(sales.tokens.access_token)).toEqual({ api: 401, registryMcp: 401, salesTasks: 401, salesMcp: 'ok', signalsMcp: 401 });

      // Refresh keeps the audience; a token request may narrow it but not widen it (RFC 8707 2.2).
      const refreshed = await oauth.processRefreshTokenResponse(
        sales.as,
        sales.client,
        await oauth.refreshTokenGrantRequest(sales.as, sales.client, oauth.None(), sales.tokens.refresh_token!, insecure),
      );
      expect((await statusWith(refreshed.access_token)).salesMcp).toBe('ok');
      const widen = await fetch(sales.as.token_endpoint!, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          client_id: sales.client.client_id,
          refresh_token: refreshed.refresh_token!,
          resource: `${s().base}/api`,
        }),
      });
      expect(widen.status).toBe(400);
      expect((await widen.json()).error).toBe('invalid_target');
    });

    test('several resources in one request; resources the deployment does not publish are invalid_target', async () => {
      const user = await newUser(s(), 'member');
      const both = await signedIn(s().base, user.login, user.password, [`${s().base}/sales/tasks`, `${s().base}/signals/mcp`]);
      expect(await statusWith(both.tokens.access_token)).toEqual({ api: 401, registryMcp: 401, salesTasks: 'ok', salesMcp: 401, signalsMcp: 'ok' });
      for (const foreign of ['https://other.example/api', `${s().base}/nowhere`, `${s().base}/api?x=1`, `${s().base}/api#f`]) {
        const url = new URL(both.authorizeUrl);
        url.searchParams.delete('resource');
        url.searchParams.set('resource', foreign);
        const refused = await fetch(url, { redirect: 'manual' });
        expect(refused.status).toBe(302);
        expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');
      }
    });

    test('the MCP SDK client gets a token for an agent mount from its metadata, and that token opens only the mount', async () => {
      const user = await newUser(s(), 'member');
      const { result, token, resource } = await mcpSdkCall(`${s().base}/sales/mcp`, user.login, user.password);
      expect(resource).toBe(`${s().base}/sales/mcp`);
      // Authenticated: the task is unknown to this caller, not a credential failure.
      expect(JSON.stringify(result)).not.toContain('AUTH_REQUIRED');
      expect(await statusWith(token)).toEqual({ api: 401, registryMcp: 401, salesTasks: 401, salesMcp: 'ok', signalsMcp: 401 });
    });
  },
);

/** Raw HTTP/1.1 from a chosen loopback source address (a distinct client address for per-address limits). */
function postFrom(localAddress: string, port: number, path: string, form: URLSearchParams): Promise<number> {
  const body = form.toString();
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress }, () =>
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      ),
    );
    let out = '';
    socket.on('data', (d) => (out += d));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

forEachDatabase(
  'oauth edge input rules and sign-in throttling',
  // A clock that stands still: the throttle counts in fixed 5-minute windows, which real time could cross mid-test.
  (adapter, schema) => startAt(adapter, schema, plugins(), { overrides: [[Clock, new ManualClock(new Date())]] }),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();
    const register = (metadata: unknown) => s().fetch('/register', { method: 'POST', json: metadata });
    const form = (path: string, values: Record<string, string>) =>
      s().fetch(path, {
        method: 'POST',
        body: new URLSearchParams(values),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        redirect: 'manual',
      });

    test('NUL, lone surrogates and control characters are 400s naming the field, never 500s or stored', async () => {
      const nul = await register({ redirect_uris: [REDIRECT], client_name: 'a\u0000b', token_endpoint_auth_method: 'none' });
      expect(nul.status).toBe(400);
      expect(await nul.json()).toMatchObject({ error: 'invalid_client_metadata', error_description: expect.stringContaining('client_name') });
      const surrogate = await s().fetch('/register', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"redirect_uris":["http://127.0.0.1:9/callback"],"client_name":"x\\ud800y","token_endpoint_auth_method":"none"}',
      });
      expect(surrogate.status).toBe(400);
      expect((await surrogate.json()).error_description).toContain('surrogate');
      for (const uri of ['https://app.example/cb\r\nSet-Cookie: x=1', 'https://app.example/c\tb', 'https://app.example/cb\u0000']) {
        const crlf = await register({ redirect_uris: [uri], token_endpoint_auth_method: 'none' });
        expect(crlf.status).toBe(400);
        expect((await crlf.json()).error).toBe('invalid_redirect_uri');
      }
      const control = await register({ redirect_uris: [REDIRECT], client_name: 'line\nbreak' });
      expect(control.status).toBe(400);

      const token = await form('/token', { grant_type: 'authorization_code', client_id: 'x\u0000', code: 'c' });
      expect(token.status).toBe(400);
      expect(await token.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('client_id') });
      const basic = await s().fetch('/token', {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'authorization_code', code: 'c' }),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('a%00b:secret').toString('base64')}` },
      });
      expect(basic.status).toBe(401);
      const revoke = await form('/revoke', { token: 'a\u0000', client_id: 'x' });
      expect(revoke.status).toBe(400);

      const getAuthorize = await s().fetch(`/authorize?client_id=${encodeURIComponent('a\u0000')}&response_type=code`);
      expect(getAuthorize.status).toBe(400);
      expect(await getAuthorize.text()).toContain('client_id');
      const postAuthorize = await form('/authorize', { client_id: 'x', login: 'who\u0000', password: 'p' });
      expect(postAuthorize.status).toBe(400);
      expect(await postAuthorize.text()).toContain('login');
    });

    test('wrong passwords are throttled per (login, client address): the owner signs in from elsewhere', async () => {
      const user = await newUser(s(), 'member');
      const registered = await (await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' })).json();
      const verifier = oauth.generateRandomCodeVerifier();
      const params = {
        response_type: 'code',
        client_id: registered.client_id,
        redirect_uri: REDIRECT,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        decision: 'allow',
        login: user.login,
      };
      const port = Number(new URL(s().base).port);
      const attempt = (from: string, password: string) => postFrom(from, port, '/authorize', new URLSearchParams({ ...params, password }));
      for (let i = 0; i < 10; i++) expect(await attempt('127.0.0.2', 'wrong password')).toBe(401);
      expect(await attempt('127.0.0.2', 'wrong password')).toBe(429);
      expect(await attempt('127.0.0.2', user.password)).toBe(429);
      // Another address (the account's owner) is not locked out by someone else's guesses.
      expect(await attempt('127.0.0.3', user.password)).toBe(302);
    });
  },
);

describe('without PUBLIC_URL: the issuer and resources follow the loopback name the client used', () => {
  let server: RunningServer;
  let deployment: Awaited<ReturnType<typeof assemble>>;
  let port: number;
  const adapter = process.env.DATABASE_URL ? 'postgres' : 'pglite';
  const schema = uniqueSchema('oauth_loopback');
  beforeAll(async () => {
    port = await freePort();
    const storage = await storagePlugin(adapter, schema);
    deployment = await assemble(definePreset({ name: 'oauth-loopback', plugins: [storage, ...plugins()] }), {
      env: { LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: String(port) },
    });
    server = await serve(deployment, { port, hostname: '127.0.0.1' });
  });
  afterAll(async () => {
    await server?.close();
    await dropSchema(adapter, schema);
  });

  test('discovery names the host the client used; an untrusted Host gets the listen address, not its echo', async () => {
    for (const base of [`http://localhost:${port}`, `http://127.0.0.1:${port}`]) {
      const meta = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json();
      expect(meta).toMatchObject({ issuer: base, token_endpoint: `${base}/token` });
      for (const path of ['/api', '/mcp', '/sales/mcp']) {
        const pr = await (await fetch(`${base}/.well-known/oauth-protected-resource${path}`)).json();
        expect(pr).toMatchObject({ resource: base + path, authorization_servers: [base] });
      }
    }
    const echoed = await (await fetch(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`, { headers: { host: 'evil.example' } })).json();
    expect(echoed.issuer).toBe(`http://127.0.0.1:${port}`);
  });

  test('oauth4webapi and the MCP SDK sign in through localhost and 127.0.0.1 alike', async () => {
    const user = await newUser({ deployment } as unknown as TestServer, 'member');
    for (const base of [`http://localhost:${port}`, `http://127.0.0.1:${port}`]) {
      const { tokens } = await signedIn(base, user.login, user.password, [`${base}/api`]);
      // Both names are this server: a token minted through one is good through the other.
      for (const other of [`http://localhost:${port}`, `http://127.0.0.1:${port}`]) {
        const saved = await fetch(`${other}/api/brands/save`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ domain: 'loopback.example', brand_name: 'L' }),
        });
        expect(saved.status).toBe(200);
      }
      const { result, resource } = await mcpSdkCall(`${base}/sales/mcp`, user.login, user.password);
      expect(resource).toBe(`${base}/sales/mcp`);
      expect(JSON.stringify(result)).not.toContain('AUTH_REQUIRED');
    }
  });
});
