import { afterAll, beforeAll, expect, test } from 'bun:test';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryProbes from '../../plugins/registry-probes/index.ts';
import restHost from '../../hosts/rest/index.ts';
import signalsPreset from '../../config/signals-agent.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { uniqueSchema, dropSchema } from '../support/db.ts';
import { TEST_CERT, loopbackResolver } from '../support/loopback.ts';
import { forward, startTlsFront } from '../support/tls-front.ts';
import { STUB_FORMATS, stubAgentPlugins } from '../fixtures/stub-agent.ts';

// Real agents on loopback behind a TLS front (the crawler only speaks https to named hosts):
// - sales.pub.test: the repo's A2A host serving a stub sales/creative agent (A2A only, no MCP);
// - signals.pub.test: the signals-agent preset (MCP at /mcp, A2A at /a2a);
// - legacy.pub.test: an A2A 0.3 card (no supportedInterfaces) pointing at the sales agent;
// - stubs for slow, never-finishing, broken and misdirected agents.
const front = startTlsFront();
const schemas = { probes: uniqueSchema('probes_a2a'), sales: uniqueSchema('probes_sales'), signals: uniqueSchema('probes_signals') };
let app: TestServer;
let sales: TestServer;
let signals: TestServer;
const legacyCalls: Array<{ version: string | null; method: string }> = [];

const card = (rpcUrl: string, extra: Record<string, unknown> = {}) => ({
  name: 'Stub',
  supportedInterfaces: [{ url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  skills: [{ id: 'list_creative_formats', name: 'list_creative_formats' }],
  ...extra,
});

beforeAll(async () => {
  const env = (name: string) => ({ env: { PUBLIC_URL: front.url(name) } });
  sales = await startServer('pglite', schemas.sales, stubAgentPlugins({ hosts: ['a2a'] }), env('sales.pub.test'));
  signals = await startServer('pglite', schemas.signals, signalsPreset.plugins.slice(1), env('signals.pub.test'));
  front.route('sales.pub.test', sales.base);
  front.route('signals.pub.test', signals.base);
  front.route('legacy.pub.test', async (req) => {
    const url = new URL(req.url);
    if (url.pathname === '/.well-known/agent-card.json') {
      // An A2A 0.3 card: `url` + preferredTransport, no supportedInterfaces.
      return Response.json({ name: 'Legacy', protocolVersion: '0.3.0', url: front.url('legacy.pub.test', '/a2a'), preferredTransport: 'JSONRPC', skills: [] });
    }
    const body = await req.arrayBuffer();
    legacyCalls.push({ version: req.headers.get('a2a-version'), method: JSON.parse(new TextDecoder().decode(body)).method });
    return forward(sales.base, req, body);
  });
  front.route('slow-a2a.pub.test', async (req) => {
    if (req.method === 'GET') return Response.json(card(front.url('slow-a2a.pub.test', '/a2a')));
    await Bun.sleep(3000);
    return Response.json({});
  });
  front.route('working-a2a.pub.test', async (req) => {
    if (req.method === 'GET') return Response.json(card(front.url('working-a2a.pub.test', '/a2a')));
    const rpc = (await req.json()) as { id: number };
    return Response.json({ jsonrpc: '2.0', id: rpc.id, result: { task: { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } } } });
  });
  front.route('broken-a2a.pub.test', (req) =>
    req.method === 'GET'
      ? Response.json(card(front.url('broken-a2a.pub.test', '/a2a')))
      : new Response('<html>oops</html>', { status: 500, headers: { 'content-type': 'text/html' } }),
  );
  front.route('misdirected-a2a.pub.test', (req) => Response.json(card(`https://intranet.pub.test/a2a`)));
  front.route('nocard.pub.test', () => new Response('not found', { status: 404 }));
  // Everything under /private answers 401; the card at the origin names the sales agent's endpoint.
  front.route('gated.pub.test', (req) =>
    new URL(req.url).pathname.startsWith('/private')
      ? new Response('{"error":"unauthorized"}', { status: 401, headers: { 'content-type': 'application/json' } })
      : Response.json(card(front.url('sales.pub.test', '/a2a'))),
  );

  app = await startServer('pglite', schemas.probes, [
    crawlerHttp({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test'], { 'intranet.pub.test': ['10.0.0.8'] }), ca: TEST_CERT }),
    registryProbes({ timeoutMs: 1500, allowedPorts: [front.port] }),
    restHost(),
  ]);
});
afterAll(async () => {
  await app.close();
  await sales.close();
  await signals.close();
  front.stop();
  for (const s of Object.values(schemas)) await dropSchema('pglite', s);
});

const q = (path: string, params: Record<string, string>) => app.fetch(`${path}?${new URLSearchParams(params)}`);
const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any });

test('agent-formats over A2A: an A2A-only agent is found through its card and the skill is invoked with a DataPart', async () => {
  const { status, body } = await json(await q('/api/public/agent-formats', { url: front.url('sales.pub.test', '/a2a') }));
  expect(status).toBe(200);
  expect(body.protocol).toBe('a2a');
  expect(body.formats).toEqual(STUB_FORMATS);
  expect(body.count).toBe(1);
});

test('agent-products over A2A passes the brief as the skill input; protocol=a2a works from the bare origin too', async () => {
  const auto = await json(await q('/api/public/agent-products', { url: front.url('sales.pub.test', '/a2a'), brief: 'cyclists' }));
  expect(auto.status).toBe(200);
  expect(auto.body.products).toEqual([{ product_id: 'p1', name: 'Homepage takeover for cyclists' }]);
  const explicit = await json(await q('/api/public/agent-products', { url: front.url('sales.pub.test'), protocol: 'a2a', brief: 'runners' }));
  expect(explicit.status).toBe(200);
  expect(explicit.body.protocol).toBe('a2a');
  expect(explicit.body.products[0].name).toBe('Homepage takeover for runners');
});

test('an A2A 0.3 card is called with message/send and no A2A-Version header', async () => {
  const { status, body } = await json(await q('/api/public/agent-formats', { url: front.url('legacy.pub.test'), protocol: 'a2a' }));
  expect(status).toBe(200);
  expect(body.formats).toEqual(STUB_FORMATS);
  expect(legacyCalls).toEqual([{ version: null, method: 'message/send' }]);
});

test('the signals agent preset: discover-agent sees MCP and A2A; a skill it lacks is a 502 over either protocol', async () => {
  const found = await json(await q('/api/public/discover-agent', { url: front.url('signals.pub.test', '/mcp') }));
  expect(found.status).toBe(200);
  expect(found.body.protocols).toEqual(['mcp', 'a2a']);
  expect(found.body.a2a.skills.map((s: any) => s.id)).toContain('get_signals');
  expect(found.body.a2a.jsonrpc).toEqual({ url: front.url('signals.pub.test', '/a2a'), version: '1.0' });
  const overA2a = await json(await q('/api/public/agent-formats', { url: front.url('signals.pub.test', '/a2a'), protocol: 'a2a' }));
  expect(overA2a.status).toBe(502);
  expect(overA2a.body.message).toContain('Unknown task');
  const overMcp = await json(await q('/api/public/agent-formats', { url: front.url('signals.pub.test', '/mcp'), protocol: 'mcp' }));
  expect(overMcp.status).toBe(502);
  expect(overMcp.body.message).toContain('list_creative_formats');
});

test('a card location that answers 401 is skipped for the next one (the origin)', async () => {
  const { status, body } = await json(await q('/api/public/agent-formats', { url: front.url('gated.pub.test', '/private/agent'), protocol: 'a2a' }));
  expect(status).toBe(200);
  expect(body.formats).toEqual(STUB_FORMATS);
  const found = await json(await q('/api/public/discover-agent', { url: front.url('gated.pub.test', '/private/agent') }));
  expect(found.body.a2a.card_url).toBe(front.url('gated.pub.test', '/.well-known/agent-card.json'));
});

test('A2A failures: slow answer and a task that never finishes -> 504; HTTP 500, refused card endpoint, no card -> 502', async () => {
  expect((await q('/api/public/agent-formats', { url: front.url('slow-a2a.pub.test'), protocol: 'a2a' })).status).toBe(504);
  expect((await q('/api/public/agent-products', { url: front.url('working-a2a.pub.test'), protocol: 'a2a' })).status).toBe(504);
  const broken = await json(await q('/api/public/agent-formats', { url: front.url('broken-a2a.pub.test'), protocol: 'a2a' }));
  expect(broken.status).toBe(502);
  const misdirected = await json(await q('/api/public/agent-formats', { url: front.url('misdirected-a2a.pub.test'), protocol: 'a2a' }));
  expect(misdirected.status).toBe(502);
  expect(misdirected.body.message).toContain('refused');
  const nocard = await json(await q('/api/public/agent-formats', { url: front.url('nocard.pub.test') }));
  expect(nocard.status).toBe(502);
  expect(Object.keys(nocard.body.details).sort()).toEqual(['a2a', 'mcp']);
});

test('the same guards: a private URL is 400 over A2A, and protocol must be auto, mcp or a2a', async () => {
  expect((await q('/api/public/agent-formats', { url: 'https://intranet.pub.test/a2a', protocol: 'a2a' })).status).toBe(400);
  expect((await q('/api/public/agent-products', { url: 'https://[::ffff:10.0.0.1]/', protocol: 'a2a' })).status).toBe(400);
  expect((await q('/api/public/agent-formats', { url: front.url('sales.pub.test'), protocol: 'grpc' })).status).toBe(400);
});
