import { describe, expect, test } from 'bun:test';
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import testAgentPreset, { TEST_TOKEN } from '../../config/test-agent.ts';
import signalsPreset from '../../config/signals-agent.ts';
import auth from '../../plugins/auth/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startServer, type TestServer } from '../support/server.ts';
import { startAt } from '../oauth/support.ts';
import oauth from '../../plugins/oauth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

// Auth discovery on every task mount of the test agent and of the signals-agent preset, with and
// without an OAuth issuer: a missing or invalid credential is HTTP 401 with a Bearer challenge; a
// valid one works as before. With an issuer (plugins/oauth), the challenge points at the mount's
// protected-resource metadata (MCP authorization spec, RFC 9728), whose authorization server
// publishes its RFC 8414 metadata. Without one, credentials are API keys: no metadata (one naming an
// authorization server that does not exist leads OAuth clients nowhere), the mount is the realm.
const SIGNALS_TOKEN = 'signals-preset-test-token-0001';

interface Mount {
  kind: 'mcp' | 'a2a' | 'rest';
  /** The protected resource (the mount's path). */
  path: string;
  /** A request needing a credential. */
  call(token?: string): Request | [string, RequestInit];
}

const mcpInit = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const mcpCall = (name: string, args: unknown, id = 7) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const a2aSend = (skill: string, input: unknown) => ({
  jsonrpc: '2.0',
  id: 3,
  method: 'message/send',
  params: { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'data', data: { skill, input } }] } },
});

function mounts(prefix: string): Mount[] {
  const json = (body: unknown, headers: Record<string, string>, token?: string): RequestInit => ({
    method: 'POST',
    headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return [
    {
      kind: 'mcp',
      path: `${prefix}/mcp`,
      call: (t) => [`${prefix}/mcp`, json(mcpCall('get_signals', { signal_spec: 'cars', context: { c: 1 } }), MCP_HEADERS, t)],
    },
    {
      kind: 'a2a',
      path: `${prefix}/a2a`,
      call: (t) => [`${prefix}/a2a`, json(a2aSend('get_signals', { signal_spec: 'cars' }), { 'content-type': 'application/json' }, t)],
    },
    {
      kind: 'rest',
      path: `${prefix}/tasks`,
      call: (t) => [`${prefix}/tasks/get_signals`, json({ signal_spec: 'cars' }, { 'content-type': 'application/json' }, t)],
    },
  ];
}

/** Read a JSON or SSE answer's JSON-RPC message. */
async function rpcBody(res: Response): Promise<any> {
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('event-stream')) return JSON.parse(text);
  const data = text.split('\n').find((l) => l.startsWith('data:'));
  return JSON.parse(data!.slice(5));
}

function suite(name: string, plugins: () => Parameters<typeof startServer>[2], prefix: string, token: string, issuer = false) {
  forEachDatabase<TestServer>(
    name,
    // The built-in authorization server names PUBLIC_URL as issuer: start on a known port.
    (adapter, schema) => (issuer ? startAt : startServer)(adapter, schema, plugins()),
    (s) => s.close(),
    (get) => {
      for (const m of mounts(prefix)) {
        describe(m.kind, () => {
          const send = (t?: string) => {
            const [path, init] = m.call(t) as [string, RequestInit];
            return get().fetch(path, init);
          };

          test('no credential: 401 with a Bearer challenge; metadata only where an authorization server issues tokens', async () => {
            const res = await send();
            expect(res.status).toBe(401);
            const { resourceMetadataUrl, error } = extractWWWAuthenticateParams(res);
            expect(error).toBeUndefined();
            const body = (await res.json()) as any;
            if (m.kind === 'rest') expect(body).toMatchObject({ error: 'auth_required', code: 'AUTH_REQUIRED', errors: [{ code: 'AUTH_REQUIRED' }] });
            else expect(body).toMatchObject({ jsonrpc: '2.0', error: { code: -32028, data: { proto_error: { code: 'AUTH_REQUIRED' } } } });
            if (m.kind === 'mcp') expect(body.id).toBe(7);

            const metadataPath = `/.well-known/oauth-protected-resource${m.path}`;
            if (!issuer) {
              expect(res.headers.get('www-authenticate')).toBe(`Bearer realm="${get().base}${m.path}"`);
              expect((await get().fetch(metadataPath)).status).toBe(404);
              return;
            }
            expect(resourceMetadataUrl?.href).toBe(`${get().base}${metadataPath}`);
            const metadata = (await (await get().fetch(metadataPath)).json()) as any;
            expect(metadata).toEqual({
              resource: `${get().base}${m.path}`,
              authorization_servers: [get().base],
              bearer_methods_supported: ['header'],
              scopes_supported: [],
              resource_name: expect.any(String),
            });
            // RFC 8414 section 3: each named authorization server publishes its metadata, under its own issuer.
            for (const server of metadata.authorization_servers) {
              const as = await fetch(`${server}/.well-known/oauth-authorization-server`);
              expect(as.status).toBe(200);
              expect((await as.json()) as any).toMatchObject({ issuer: server, token_endpoint: expect.any(String) });
            }
            // The MCP SDK's own discovery finds and accepts the same document.
            const discovered = await discoverOAuthProtectedResourceMetadata(`${get().base}${m.path}`);
            expect(discovered.resource).toBe(`${get().base}${m.path}`);
          });

          test('invalid credential: 401 with error="invalid_token"', async () => {
            const res = await send('not-a-valid-credential-at-all');
            expect(res.status).toBe(401);
            const challenge = extractWWWAuthenticateParams(res);
            expect(challenge.error).toBe('invalid_token');
            expect(challenge.resourceMetadataUrl !== undefined).toBe(issuer);
          });

          test('valid credential: answered as before', async () => {
            const res = await send(token);
            expect(res.status).toBe(200);
            const body = m.kind === 'rest' ? ((await res.json()) as any) : await rpcBody(res);
            const payload = m.kind === 'mcp' ? body.result.structuredContent : m.kind === 'a2a' ? body.result.artifacts[0].parts.at(-1).data : body;
            expect(payload.signals.length).toBeGreaterThan(0);
          });
        });
      }

      describe('mcp without a credential', () => {
        const post = (body: unknown, headers: Record<string, string> = MCP_HEADERS) =>
          get().fetch(`${prefix}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });

        test('initialize, tools/list and the capabilities tool are public (discovery); other tools are not', async () => {
          expect((await post(mcpInit)).status).toBe(200);
          const list = await rpcBody(await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
          expect(list.result.tools.map((t: any) => t.name)).toContain('get_signals');
          const caps = await rpcBody(await post(mcpCall('get_proto_capabilities', {})));
          expect(caps.result.structuredContent.supported_protocols).toEqual(['signals']);
          expect((await post(mcpCall('activate_signal', {}))).status).toBe(401);
          // Task polling needs the caller too.
          expect((await post({ jsonrpc: '2.0', id: 9, method: 'tasks/get', params: { taskId: crypto.randomUUID() } })).status).toBe(401);
        });

        test('an invalid credential is refused even for tools/list', async () => {
          const res = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...MCP_HEADERS, authorization: 'Bearer nope-nope-nope-nope-nope' });
          expect(res.status).toBe(401);
        });

        test('the official MCP client lists tools without a credential', async () => {
          const client = new Client({ name: 'anonymous', version: '1' });
          await client.connect(new StreamableHTTPClientTransport(new URL(`${get().base}${prefix}/mcp`)));
          expect((await client.listTools()).tools.map((t) => t.name)).toContain('activate_signal');
          await client.close();
        });

        test('Accept: application/json alone gets one JSON body; SSE only to clients that accept it', async () => {
          const json = await post(mcpInit, { 'content-type': 'application/json', accept: 'application/json' });
          expect([json.status, json.headers.get('content-type')]).toEqual([200, 'application/json']);
          expect(((await json.json()) as any).result.protocolVersion).toBeString();
          const sse = await post(mcpInit);
          expect([sse.status, sse.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
          expect((await rpcBody(sse)).result.protocolVersion).toBeString();
          expect((await post(mcpInit, { 'content-type': 'application/json', accept: 'text/html' })).status).toBe(406);
        });
      });
    },
  );
}

// The preset's own plugin lists, minus their storage entry (the test server adds an isolated one).
suite('auth discovery: test agent', () => testAgentPreset.plugins.slice(1), '/signals', TEST_TOKEN);
suite('auth discovery: signals-agent preset', () => [auth({ testTokens: [{ token: SIGNALS_TOKEN }] }), ...signalsPreset.plugins.slice(2)], '', SIGNALS_TOKEN);
suite(
  'auth discovery: signals-agent preset with OAuth',
  () => [auth({ testTokens: [{ token: SIGNALS_TOKEN }] }), oauth(), rateLimit({ pruneIntervalMs: 0 }), ...signalsPreset.plugins.slice(2)],
  '',
  SIGNALS_TOKEN,
  true,
);
