import { afterAll, beforeAll, expect, test } from 'bun:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryProbes from '../../plugins/registry-probes/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { uniqueSchema, dropSchema } from '../support/db.ts';
import { TEST_CERT, TEST_KEY, loopbackResolver } from '../support/loopback.ts';

// A real MCP server (the SDK's stateless Streamable HTTP transport, which answers 406 unless the
// client accepts both JSON and SSE) and an A2A agent card, behind TLS on loopback.
const FORMATS = [{ format_id: { agent_url: 'https://agent.pub.test', id: 'display_300x250_image' }, name: 'Medium rectangle', type: 'display' }];
const PRODUCTS = [{ product_id: 'p1', name: 'Homepage takeover' }];
const acceptHeaders: string[] = [];

async function mcp(req: Request): Promise<Response> {
  acceptHeaders.push(req.headers.get('accept') ?? '');
  const server = new McpServer({ name: 'test-sales-agent', version: '1.2.3' });
  server.registerTool('list_creative_formats', { description: 'Formats' }, async () => ({
    content: [{ type: 'text', text: JSON.stringify({ formats: FORMATS }) }],
  }));
  server.registerTool('get_products', { description: 'Products' }, async () => ({ content: [{ type: 'text', text: JSON.stringify({ products: PRODUCTS }) }] }));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  return transport.handleRequest(req);
}

let upstream: ReturnType<typeof Bun.serve>;
let app: TestServer;
const schema = uniqueSchema('probes');

beforeAll(async () => {
  upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: TEST_CERT, key: TEST_KEY },
    async fetch(req) {
      const url = new URL(req.url);
      const host = url.hostname;
      if (host === 'agent.pub.test' && url.pathname === '/mcp') return mcp(req);
      if (host === 'a2a.pub.test' && url.pathname === '/.well-known/agent-card.json') {
        return Response.json({
          name: 'A2A Creative',
          description: 'Builds creatives',
          protocolVersion: '0.3.0',
          capabilities: { streaming: true },
          skills: [{ id: 'build_creative', name: 'Build creative' }],
        });
      }
      if (host === 'slow.pub.test') {
        await Bun.sleep(3000);
        return Response.json({});
      }
      if (host === 'broken.pub.test') return new Response('<html>oops</html>', { status: 500, headers: { 'content-type': 'text/html' } });
      if (host === 'pub.test' && url.pathname === '/.well-known/adagents.json') {
        return Response.json({
          authorized_agents: [{ url: 'https://agent.pub.test/mcp', authorized_for: 'All', authorization_type: 'property_ids', property_ids: ['home'] }],
          properties: [{ property_id: 'home', property_type: 'website', name: 'Home', identifiers: [{ type: 'domain', value: 'pub.test' }] }],
        });
      }
      if (host === 'bad.pub.test' && url.pathname === '/.well-known/adagents.json') return Response.json({ authorized_agents: 'nope' });
      return new Response('not found', { status: 404 });
    },
  });
  const origin = `https://{domain}:${upstream.port}`;
  app = await startServer('pglite', schema, [
    crawlerHttp({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test'], { 'intranet.pub.test': ['10.0.0.8'] }), ca: TEST_CERT }),
    registryProbes({ timeoutMs: 1500, origin, allowedPorts: [upstream.port!] }),
    restHost(),
  ]);
});
afterAll(async () => {
  await app.close();
  upstream.stop(true);
  await dropSchema('pglite', schema);
});

const u = (host: string, path = '') => `https://${host}:${upstream.port}${path}`;
const get = (path: string) => app.fetch(path);

test('discover-agent: MCP agent -> tools and server info; the MCP Accept header is sent', async () => {
  const res = await get(`/api/public/discover-agent?url=${encodeURIComponent(u('agent.pub.test', '/mcp'))}`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as any;
  expect(body.reachable).toBe(true);
  expect(body.protocol).toBe('mcp');
  expect(body.name).toBe('test-sales-agent');
  expect(body.mcp.tools.map((t: any) => t.name).sort()).toEqual(['get_products', 'list_creative_formats']);
  expect(acceptHeaders.length).toBeGreaterThan(0);
  expect(acceptHeaders.every((h) => h === 'application/json, text/event-stream')).toBe(true);
});

test('discover-agent: A2A agent -> card, skills and capabilities', async () => {
  const body = (await (await get(`/api/public/discover-agent?url=${encodeURIComponent(u('a2a.pub.test', '/a2a'))}`)).json()) as any;
  expect(body.protocol).toBe('a2a');
  expect(body.protocols).toEqual(['a2a']);
  expect(body.a2a.skills).toEqual([{ id: 'build_creative', name: 'Build creative' }]);
  expect(body.a2a.capabilities).toEqual({ streaming: true });
});

test('discover-agent: timeout -> 504, neither protocol -> 502, private address -> 400, bad URL -> 400', async () => {
  expect((await get(`/api/public/discover-agent?url=${encodeURIComponent(u('slow.pub.test', '/mcp'))}`)).status).toBe(504);
  const failed = await get(`/api/public/discover-agent?url=${encodeURIComponent(u('broken.pub.test', '/mcp'))}`);
  expect(failed.status).toBe(502);
  expect(((await failed.json()) as any).details.mcp).toContain('500');
  expect((await get(`/api/public/discover-agent?url=${encodeURIComponent('https://intranet.pub.test/mcp')}`)).status).toBe(400);
  expect((await get(`/api/public/discover-agent?url=${encodeURIComponent('https://[::ffff:10.0.0.1]/mcp')}`)).status).toBe(400);
  expect((await get('/api/public/discover-agent?url=not-a-url')).status).toBe(400);
  expect((await get('/api/public/discover-agent')).status).toBe(400);
});

test('agent-formats and agent-products call the MCP tools', async () => {
  const formats = (await (await get(`/api/public/agent-formats?url=${encodeURIComponent(u('agent.pub.test', '/mcp'))}`)).json()) as any;
  expect(formats.formats).toEqual(FORMATS);
  expect(formats.count).toBe(1);
  const products = (await (await get(`/api/public/agent-products?url=${encodeURIComponent(u('agent.pub.test', '/mcp'))}&brief=news`)).json()) as any;
  expect(products.products).toEqual(PRODUCTS);
  expect((await get(`/api/public/agent-formats?url=${encodeURIComponent(u('slow.pub.test', '/mcp'))}`)).status).toBe(504);
  expect((await get(`/api/public/agent-products?url=${encodeURIComponent(u('broken.pub.test', '/mcp'))}`)).status).toBe(502);
  expect((await get(`/api/public/agent-formats?url=${encodeURIComponent(u('a2a.pub.test', '/mcp'))}`)).status).toBe(502);
});

test('validate-publisher: valid, invalid, missing, slow (504), broken (502), private (400)', async () => {
  const ok = (await (await get('/api/public/validate-publisher?domain=pub.test')).json()) as any;
  expect(ok).toMatchObject({ domain: 'pub.test', found: true, valid: true, authorized_agents: 1, properties: 1, errors: [] });
  const bad = (await (await get('/api/public/validate-publisher?domain=bad.pub.test')).json()) as any;
  expect(bad.valid).toBe(false);
  expect(bad.errors.length).toBeGreaterThan(0);
  const missing = (await (await get('/api/public/validate-publisher?domain=nothing.pub.test')).json()) as any;
  expect(missing).toMatchObject({ found: false, valid: false });
  expect((await get('/api/public/validate-publisher?domain=slow.pub.test')).status).toBe(504);
  expect((await get('/api/public/validate-publisher?domain=broken.pub.test')).status).toBe(502);
  expect((await get('/api/public/validate-publisher?domain=intranet.pub.test')).status).toBe(400);
  expect((await get('/api/public/validate-publisher?domain=not%20a%20domain')).status).toBe(400);
});
