import { afterAll, describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import preset from '../../config/all.ts';
import { TENANTS } from '../../config/test-agent.ts';
import { ManualTimers } from '../../core/scheduler.ts';
import type { PluginEntry } from '../../core/config.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import { answer, type FastHandlers } from '../../hosts/shared/mcp-fast-path.ts';
import { dropSchema, forEachDatabase, type AdapterName } from '../support/db.ts';
import auth from '../../plugins/auth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import restHost from '../../hosts/rest/index.ts';
import mcpEndpoints from '../../hosts/mcp-endpoints/index.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import { plan as governancePlan } from '../governance/fixture.ts';

// The MCP fast path (hosts/shared/mcp-fast-path.ts) must put the same bytes on the wire as the SDK server it
// stands in for. The all-in-one preset serves every tenant twice: `/{tenant}/mcp` (fast path) and
// `/{tenant}/mcp-sdk` (`sdk: true`, a per-request SDK Server + transport, as before the fast path).
// Every request of the matrix goes to both; status, headers and body must match byte for byte once
// what legitimately differs between two calls is normalized: UUIDs (task ids, and the idempotency
// keys, plan ids and domains the matrix makes unique per call so each call does real work), ISO
// timestamps, generated ids (accounts, per-caller activation keys), and the mount path (`/mcp-sdk` -> `/mcp`, in the 401 challenge). Left out of the header
// comparison: date, x-request-id, and the framing headers content-length / transfer-encoding (the SDK
// streams its SSE answer, the fast path sends a quick one whole).

/** Counts SDK servers connected to a transport: which requests reached the SDK. */
let sdkServers = 0;
const connect = Server.prototype.connect;
Server.prototype.connect = function (this: Server, ...args: Parameters<Server['connect']>) {
  sdkServers++;
  return connect.apply(this, args);
};

const SSE = 'application/json, text/event-stream';
const JSON_ONLY = 'application/json';
const SKIPPED_HEADERS = new Set(['date', 'x-request-id', 'content-length', 'transfer-encoding']);
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g;
/** Ids made of a random or per-caller part: accounts (`acc_` + 32 hex), activation keys (`platform_` + 12 hex). */
const GENERATED = /\b(acc_[0-9a-f]{32}|[a-z0-9]{1,8}_[0-9a-f]{12})\b/g;
const normalize = (text: string) => text.replaceAll('/mcp-sdk', '/mcp').replace(UUID, '<uuid>').replace(ISO_TIME, '<time>').replace(GENERATED, '<generated>');

interface Exchange {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Who answered: `fast` (no SDK server), `sdk` (the fallback), `edge` (refused before either, shared code). */
type Route = 'fast' | 'sdk' | 'edge';

interface Case {
  name: string;
  /** The JSON-RPC body as text, or a function of a fresh UUID (to make mutating calls unique). */
  body: string | ((unique: string) => string);
  headers?: Record<string, string>;
  /** A bearer token: `key` (an organization's key), `fresh` (a new organization's), a literal, or none. */
  token?: 'key' | 'fresh' | string;
  /** Who must answer (several: whichever the deployment's auth rules pick). */
  route: Route | Route[];
  /** The call must succeed (a valid input really is one). */
  ok?: true;
}

const rpc = (method: string, params?: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const initialize = (protocolVersion: string) => rpc('initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'byte-test', version: '1.0.0' } });
const call = (name: string, args?: unknown) => rpc('tools/call', { name, ...(args === undefined ? {} : { arguments: args }) });

const TTD = { type: 'platform', platform: 'the-trade-desk' };

/** Valid calls of tasks that need more than `{}` (mutating ones are unique per call). */
const VALID: Record<string, (u: string) => Record<string, unknown>> = {
  get_signals: () => ({ signal_spec: 'SUV shoppers in market for a new car', deliver_to: { deployments: [TTD], countries: ['US'] } }),
  activate_signal: (u) => ({ signal_agent_segment_id: 'sig_auto_intenders_suv', deployments: [TTD], idempotency_key: u }),
  get_products: () => ({ buying_mode: 'brief', brief: 'podcasts' }),
  sync_accounts: (u) => ({ idempotency_key: u, accounts: [{ brand: { domain: `${u}.acme.example` }, operator: 'acme.example', billing: 'operator' }] }),
  sync_plans: (u) => ({ idempotency_key: u, plans: [governancePlan(`plan-${u}`)] }),
  get_brand_identity: () => ({ brand_id: 'nimbus_cola' }),
};

/** Requests that do not depend on the tenant's tools. */
const FIXED: Case[] = [
  { name: 'initialize 2025-06-18', body: initialize('2025-06-18'), route: 'fast' },
  { name: 'initialize latest', body: initialize('2025-11-25'), route: 'fast' },
  { name: 'initialize 2024-11-05', body: initialize('2024-11-05'), route: 'fast' },
  { name: 'initialize unsupported version (server picks the latest)', body: initialize('1999-01-01'), route: 'fast' },
  {
    name: 'initialize ignores an unsupported Mcp-Protocol-Version header and a session id',
    body: initialize('2025-06-18'),
    headers: { 'mcp-protocol-version': '1999-01-01', 'mcp-session-id': 'stale-session' },
    route: 'fast',
  },
  { name: 'initialize with a token', body: initialize('2025-06-18'), token: 'key', route: 'fast' },
  { name: 'initialize with string id', body: rpc('initialize', JSON.parse(initialize('2025-06-18')).params, 'init-1'), route: 'fast' },
  { name: 'initialize without clientInfo', body: rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {} }), route: 'edge' },
  { name: 'notifications/initialized', body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), route: 'fast' },
  {
    name: 'notifications/cancelled',
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }),
    route: 'fast',
  },
  {
    name: 'notification with an unsupported Mcp-Protocol-Version',
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    headers: { 'mcp-protocol-version': '1999-01-01' },
    route: 'sdk',
  },
  { name: 'tools/list', body: rpc('tools/list'), route: 'fast' },
  { name: 'tools/list with a token', body: rpc('tools/list'), token: 'key', route: 'fast' },
  { name: 'tools/list with cursor and _meta', body: rpc('tools/list', { cursor: 'x', _meta: { progressToken: 3 } }), route: 'fast' },
  { name: 'tools/list with a string id', body: rpc('tools/list', undefined, 'abc'), route: 'fast' },
  { name: 'tools/list with Mcp-Protocol-Version', body: rpc('tools/list'), headers: { 'mcp-protocol-version': '2025-06-18' }, route: 'fast' },
  { name: 'tools/list, unsupported Mcp-Protocol-Version', body: rpc('tools/list'), headers: { 'mcp-protocol-version': '2023-01-01' }, route: 'sdk' },
  { name: 'tools/list, session id header (stateless: ignored)', body: rpc('tools/list'), headers: { 'mcp-session-id': 'abc' }, route: 'fast' },
  { name: 'tools/list, charset in Content-Type', body: rpc('tools/list'), headers: { 'content-type': 'application/json; charset=utf-8' }, route: 'fast' },
  { name: 'tools/list, no Content-Type', body: rpc('tools/list'), headers: { 'content-type': '' }, route: 'sdk' },
  { name: 'tools/list, null id', body: rpc('tools/list', undefined, null), route: 'sdk' },
  { name: 'tools/list, fractional id', body: rpc('tools/list', undefined, 1.5), route: 'sdk' },
  { name: 'extra envelope member', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', extra: true }), route: 'sdk' },
  { name: 'wrong jsonrpc version', body: JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'tools/list' }), route: 'sdk' },
  { name: 'params as an array', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: [] }), route: 'edge' },
  { name: 'ping', body: rpc('ping'), route: 'sdk' },
  { name: 'unknown method', body: rpc('resources/list'), route: 'sdk' },
  { name: 'tasks/get of an unknown task', body: rpc('tasks/get', { taskId: 'nope' }), token: 'key', route: 'sdk' },
  { name: 'batch', body: `[${rpc('tools/list', undefined, 1)},${rpc('tools/list', undefined, 2)}]`, route: 'sdk' },
  { name: 'batch with initialize', body: `[${initialize('2025-06-18')},${rpc('tools/list', undefined, 2)}]`, route: 'sdk' },
  { name: 'unknown tool', body: call('no_such_tool', {}), token: 'key', route: 'fast' },
  {
    name: 'get_task_status of an unknown task',
    body: call('get_task_status', { task_id: '0195f0c0-0000-7000-8000-000000000000' }),
    token: 'key',
    route: 'fast',
  },
  { name: 'tools/call without name', body: rpc('tools/call', { arguments: {} }), token: 'key', route: 'edge' },
  { name: 'tools/call with array arguments', body: rpc('tools/call', { name: 'get_adcp_capabilities', arguments: [] }), token: 'key', route: 'edge' },
  { name: 'tools/call, no arguments member', body: call('get_adcp_capabilities'), route: 'fast' },
  { name: 'tools/call, task-augmented', body: rpc('tools/call', { name: 'get_adcp_capabilities', arguments: {}, task: { ttl: 1000 } }), route: 'sdk' },
  {
    name: 'tools/call, __proto__ argument',
    body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_adcp_capabilities","arguments":{"__proto__":{"a":1}}}}',
    route: 'sdk',
  },
  { name: 'tools/call, invalid token', body: call('get_adcp_capabilities', {}), token: 'not-a-valid-token-0000000000', route: 'edge' },
];

/** Per tool of a tenant: `{}`, an input with wrong members, a valid one (where known), and without a credential. */
function toolCases(tools: { name: string }[]): Case[] {
  return tools.flatMap(({ name }) => [
    { name: `${name} {}`, body: call(name, {}), token: 'key', route: 'fast' as const },
    { name: `${name} invalid`, body: call(name, { context: 'not an object', no_such_member: [1] }), token: 'key', route: 'fast' as const },
    // A new organization each: an activation is once per caller, signal and target.
    ...(VALID[name]
      ? [{ name: `${name} valid`, body: (u: string) => call(name, VALID[name]!(u)), token: 'fresh', route: 'fast' as const, ok: true as const }]
      : []),
    // Tasks that need a credential are refused at the edge (401); the others are answered.
    { name: `${name} anonymous`, body: call(name, {}), route: ['fast', 'edge'] as Route[] },
  ]);
}

interface World {
  s: TestServer;
  key: string;
}

function plugins(): PluginEntry[] {
  const mounts = TENANTS.flatMap((t) => [
    { path: `/${t.id}/mcp`, protocols: t.protocols },
    { path: `/${t.id}/mcp-sdk`, protocols: t.protocols, sdk: true },
  ]);
  const others = preset.plugins.slice(1).filter((p) => typeof p === 'function' || p.definition.name !== 'host-mcp');
  return [...others, mcpHost({ mounts })];
}

async function send(w: World, path: string, c: Case, accept: string, base = w.s.base): Promise<{ exchange: Exchange; servers: number }> {
  const headers: Record<string, string> = { accept, 'content-type': 'application/json', ...c.headers };
  if (headers['content-type'] === '') delete headers['content-type'];
  const token = c.token === 'key' ? w.key : c.token === 'fresh' ? (await newKey(w.s.deployment)).key : c.token;
  if (token) headers.authorization = `Bearer ${token}`;
  const body = typeof c.body === 'function' ? c.body(crypto.randomUUID()) : c.body;
  const before = sdkServers;
  const res = await fetch(base + path, { method: 'POST', headers, body });
  const text = await res.text();
  const kept: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!SKIPPED_HEADERS.has(name)) kept[name] = normalize(value);
  });
  return { exchange: { status: res.status, headers: kept, body: normalize(text) }, servers: sdkServers - before };
}

type Send = (c: Case, accept: string) => Promise<{ exchange: Exchange; servers: number }>;

/** Each case in both Accept modes to the fast and the SDK side: what differs, and how many the fast path answered. */
async function compare(cases: Case[], toFast: Send, toSdk: Send): Promise<{ mismatches: unknown[]; fastAnswers: number }> {
  const mismatches: unknown[] = [];
  let fastAnswers = 0;
  for (const c of cases) {
    for (const accept of [SSE, JSON_ONLY]) {
      const fast = await toFast(c, accept);
      const sdk = await toSdk(c, accept);
      // Who answered: the fast path builds no SDK server; the SDK side builds one unless the edge refused.
      const route: Route = fast.servers ? 'sdk' : sdk.servers ? 'fast' : 'edge';
      if (route === 'fast') fastAnswers++;
      const same = JSON.stringify(fast.exchange) === JSON.stringify(sdk.exchange);
      if (c.ok && (fast.exchange.status !== 200 || fast.exchange.body.includes('"isError":true')))
        mismatches.push({ case: c.name, failed: fast.exchange.body });
      if (![c.route].flat().includes(route) || !same)
        mismatches.push({ case: c.name, accept, expectedRoute: c.route, route, ...(same ? {} : { fast: fast.exchange, sdk: sdk.exchange }) });
    }
  }
  return { mismatches, fastAnswers };
}

forEachDatabase<World>(
  'MCP fast path',
  async (adapter, schema) => {
    const s = await startServer(adapter, schema, plugins(), {
      env: { PROTOCOL_NAMESPACE: 'adcp', OWNERSHIP_PROOF: 'off' },
      timers: new ManualTimers(),
    });
    return { s, key: (await newKey(s.deployment)).key };
  },
  async (w) => w.s.close(),
  (get) => {
    for (const tenant of TENANTS) {
      test(`/${tenant.id}: every request of the matrix gets the same bytes from the fast path and the SDK`, async () => {
        const w = get();
        const listed = (await (
          await send(w, `/${tenant.id}/mcp`, { name: 'list', body: rpc('tools/list'), route: 'fast' }, JSON_ONLY)
        ).exchange.body) as string;
        const tools = JSON.parse(listed).result.tools as { name: string }[];
        expect(tools.length).toBeGreaterThan(2);
        const mismatches: unknown[] = [];
        let fastAnswers = 0;
        for (const c of [...FIXED, ...toolCases(tools)]) {
          for (const accept of [SSE, JSON_ONLY]) {
            const fast = await send(w, `/${tenant.id}/mcp`, c, accept);
            const sdk = await send(w, `/${tenant.id}/mcp-sdk`, c, accept);
            // Who answered: the fast path builds no SDK server; the SDK mount builds one unless the edge refused.
            const route: Route = fast.servers ? 'sdk' : sdk.servers ? 'fast' : 'edge';
            if (route === 'fast') fastAnswers++;
            const same = JSON.stringify(fast.exchange) === JSON.stringify(sdk.exchange);
            if (c.ok && (fast.exchange.status !== 200 || fast.exchange.body.includes('"isError":true')))
              mismatches.push({ case: c.name, failed: fast.exchange.body });
            if (![c.route].flat().includes(route) || !same)
              mismatches.push({ case: c.name, accept, expectedRoute: c.route, route, ...(same ? {} : { fast: fast.exchange, sdk: sdk.exchange }) });
          }
        }
        expect(mismatches).toEqual([]);
        expect(fastAnswers).toBeGreaterThan(2 * FIXED.filter((c) => c.route === 'fast').length);
      }, 120_000);
    }

    test('the MCP SDK client (Streamable HTTP) connects, lists and calls through the fast path alone', async () => {
      const w = get();
      const before = sdkServers;
      {
        const client = new Client({ name: 'fast-path-test', version: '1.0.0' });
        const headers: Record<string, string> = { authorization: `Bearer ${w.key}` };
        await client.connect(new StreamableHTTPClientTransport(new URL(`${w.s.base}/signals/mcp`), { requestInit: { headers } }));
        expect(client.getServerVersion()?.name).toBe(w.s.deployment.config.name);
        expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toContain('get_signals');
        const result = (await client.callTool({ name: 'get_signals', arguments: VALID.get_signals!('') })) as any;
        expect(result.isError).toBeUndefined();
        expect(result.structuredContent.signals[0].signal_agent_segment_id).toBe('sig_auto_intenders_suv');
        expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
        const failed = (await client.callTool({ name: 'get_signals', arguments: { signal_spec: 7 } })) as any;
        expect(failed.isError).toBe(true);
        await client.close();
      }
      expect(sdkServers - before).toBe(0);
    }, 60_000);
  },
);

// The registry's endpoint tools (hosts/mcp-endpoints, JSON answers only) take the same fast path. One
// endpoint per deployment, so the SDK side is a second deployment (`sdk: true`) on its own schema.
const registryPlugins = (sdk: boolean) => [
  auth(),
  rateLimit(),
  registryBrands(),
  registryProperties(),
  searchPostgres(),
  registryAgents(),
  registryFeed({ sequenceIntervalMs: 0 }),
  restHost(),
  mcpEndpoints({ sdk }),
];

forEachDatabase<{ fast: World; sdk: World; adapter: AdapterName; schema: string }>(
  'MCP fast path, registry tools',
  async (adapter, schema) => {
    const world = async (s: TestServer) => ({ s, key: (await newKey(s.deployment)).key });
    const fast = await world(await startServer(adapter, schema, registryPlugins(false)));
    const sdk = await world(await startServer(adapter, `${schema}_sdk`, registryPlugins(true)));
    return { fast, sdk, adapter, schema };
  },
  async ({ fast, sdk, adapter, schema }) => {
    await fast.s.close();
    await sdk.s.close();
    await dropSchema(adapter, `${schema}_sdk`);
  },
  (get) => {
    test('every request of the matrix gets the same bytes from the fast path and the SDK', async () => {
      const { fast, sdk } = get();
      const listed = (await send(fast, '/mcp', { name: 'list', body: rpc('tools/list'), route: 'fast' }, JSON_ONLY)).exchange.body;
      const tools = JSON.parse(listed).result.tools as { name: string }[];
      expect(tools.map((t) => t.name)).toContain('resolve_brand');
      const reads: Case[] = [
        { name: 'resolve_brand, unknown', body: call('resolve_brand', { domain: 'nobody.example' }), route: 'fast' },
        { name: 'brand registry page', body: call('list_brands', { limit: 5 }), token: 'key', route: 'fast', ok: true },
        { name: 'registry stats', body: call('registry_stats', {}), route: 'fast', ok: true },
      ];
      const { mismatches, fastAnswers } = await compare(
        [...FIXED, ...toolCases(tools), ...reads],
        (c, accept) => send(fast, '/mcp', c, accept),
        (c, accept) => send(sdk, '/mcp', c, accept),
      );
      expect(mismatches).toEqual([]);
      expect(fastAnswers).toBeGreaterThan(2 * tools.length);
    }, 120_000);
  },
);

describe('a slow answer', () => {
  test('streams SSE keep-alive comments until the message, as the SDK transport does', async () => {
    let finish!: (value: Record<string, unknown>) => void;
    const handlers: FastHandlers = {
      serverInfo: { name: 'x', version: '1.0.0' },
      capabilities: {},
      listTools: () => ({ tools: [] }),
      callTool: () => new Promise((resolve) => (finish = resolve)),
    };
    const res = await answer(handlers, { kind: 'tools/call', id: 9, params: { name: 'slow' } }, true, 1);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value);
    expect(text).toBe(': keepalive\n\n');
    finish({ content: [{ type: 'text', text: '{}' }], structuredContent: {} });
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value);
    expect(text).toMatch(
      /^(: keepalive\n\n)+event: message\ndata: \{"result":\{"content":\[\{"type":"text","text":"\{\}"\}\],"structuredContent":\{\}\},"jsonrpc":"2.0","id":9\}\n\n$/,
    );
  });
});

afterAll(() => {
  Server.prototype.connect = connect;
});
