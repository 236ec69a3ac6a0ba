import { afterAll, beforeAll, expect, test } from 'bun:test';
import YAML from 'yaml';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import auth from '../../plugins/auth/index.ts';
import oauthPlugin from '../../plugins/oauth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryPolicies from '../../plugins/registry-policies/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import registryCrawl from '../../plugins/registry-crawl/index.ts';
import registryProbes from '../../plugins/registry-probes/index.ts';
import registryOwnership from '../../plugins/registry-ownership/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { Discovery } from '../../core/ports/discovery.ts';
import { Database } from '../../core/ports/database.ts';
import { BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import { dropSchema, uniqueSchema } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import { TEST_CERT, TEST_KEY, loopbackResolver } from '../support/loopback.ts';

/** Every REST endpoint of the registry called for real; each answer must match what the served OpenAPI document declares. */
let upstream: ReturnType<typeof Bun.serve>;
let s: TestServer;
let doc: any;
const schema = uniqueSchema('openapi-responses');

async function mcpAgent(req: Request): Promise<Response> {
  const server = new McpServer({ name: 'stub-sales', version: '1.0.0' });
  server.registerTool('list_creative_formats', { description: 'Formats' }, async () => ({
    content: [{ type: 'text', text: JSON.stringify({ formats: [{ format_id: { id: 'f1' } }] }) }],
  }));
  server.registerTool('get_products', { description: 'Products' }, async () => ({
    content: [{ type: 'text', text: JSON.stringify({ products: [{ product_id: 'p1' }] }) }],
  }));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  return transport.handleRequest(req);
}

beforeAll(async () => {
  upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: TEST_CERT, key: TEST_KEY },
    fetch(req): Response | Promise<Response> {
      const url = new URL(req.url);
      if (url.hostname === 'agent.pub.test' && url.pathname === '/mcp') return mcpAgent(req);
      if (url.hostname === 'pub.test' && url.pathname === '/')
        return new Response('<html><head><title>Pub</title><meta name="theme-color" content="#123456"></head></html>', {
          headers: { 'content-type': 'text/html' },
        });
      if (url.hostname === 'pub.test' && url.pathname === '/.well-known/adagents.json')
        return Response.json({
          authorized_agents: [{ url: 'https://agent.pub.test/mcp', authorized_for: 'All', authorization_type: 'property_ids', property_ids: ['home'] }],
          properties: [{ property_id: 'home', property_type: 'website', name: 'Home', identifiers: [{ type: 'domain', value: 'pub.test' }] }],
        });
      return new Response('not found', { status: 404 });
    },
  });
  const origin = `https://{domain}:${upstream.port}`;
  s = await startServer('pglite', schema, [
    auth(),
    oauthPlugin(),
    rateLimit({ pruneIntervalMs: 0 }),
    crawlerHttp({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test']), ca: TEST_CERT }),
    registryBrands({ enrichOrigin: origin }),
    registryProperties(),
    registryPolicies(),
    searchPostgres(),
    registryAgents(),
    registryFeed({ sequenceIntervalMs: 0 }),
    registryCrawl({ workers: 0, scheduleIntervalMs: 0, origin }),
    registryProbes({ timeoutMs: 2000, origin }),
    registryOwnership({ mode: 'off', origin, pruneIntervalMs: 0 }),
    restHost(),
  ]);
  doc = YAML.parse(await (await s.fetch('/openapi/registry.yaml')).text());
});
afterAll(async () => {
  await s?.close();
  upstream?.stop(true);
  await dropSchema('pglite', schema);
});

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const checked = new Set<string>();

/** Call an operation and validate the answer against the document's schema for that status. */
async function call(method: string, template: string, path: string, init: { token?: string; json?: unknown } = {}) {
  const res = await s.fetch(path, { method, ...init });
  const op = doc.paths[template]?.[method.toLowerCase()];
  expect(op, `${method} ${template} is documented`).toBeDefined();
  const declared = op.responses[String(res.status)];
  expect(declared, `${method} ${template}: status ${res.status} is documented`).toBeDefined();
  const text = await res.text();
  const schemaOf = declared.content?.['application/json']?.schema;
  if (schemaOf) {
    const resolved = schemaOf.$ref ? doc.components.schemas[schemaOf.$ref.split('/').pop()] : schemaOf;
    const body = JSON.parse(text);
    const validate = ajv.compile(resolved);
    if (!validate(body)) throw new Error(`${method} ${template} ${res.status}: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 500)}`);
  }
  if (res.status < 300) checked.add(`${method} ${template}`);
  return { status: res.status, body: text ? JSON.parse(text.startsWith('{') || text.startsWith('[') ? text : '{}') : null };
}

test('every endpoint answers what the document declares', async () => {
  const member = await newKey(s.deployment, 'member', 'Editor');
  const t = { token: member.key };
  const get = (template: string, path = template, init: { token?: string } = {}) => call('GET', template, path, init);
  const post = (template: string, json: unknown, path = template) => call('POST', template, path, { ...t, json });

  // Service routes.
  await get('/health');
  await get('/ready');
  checked.add('GET /openapi/registry.yaml');

  // Brands.
  expect(
    (
      await post('/api/brands/save', {
        domain: 'acme.example',
        brand_name: 'Acme',
        brand_manifest: { name: 'Acme', colors: [{ hex: '#ff0000', type: 'primary' }] },
      })
    ).status,
  ).toBe(200);
  await post('/api/brands/save', { domain: 'acme.example', brand_name: 'Acme Corp' });
  await post('/api/brands/discovered/community', { domain: 'legacy.example', brand_name: 'Legacy' });
  await get('/api/brands/resolve', '/api/brands/resolve?domain=acme.example');
  await get('/api/brands/resolve', '/api/brands/resolve?domain=unknown.example');
  await post('/api/brands/resolve/bulk', { domains: ['acme.example', 'nothing.example'] });
  await get('/api/brands/history', '/api/brands/history?domain=acme.example');
  await get('/api/brands/diff', '/api/brands/diff?domain=acme.example&to=2');
  await post('/api/brands/{domain}/rollback', { to_revision: 1 }, '/api/brands/acme.example/rollback');
  await get('/api/brands/registry', '/api/brands/registry?limit=5');
  await get('/api/brands/find', '/api/brands/find?q=acme');
  await get('/api/brands/enrich', '/api/brands/enrich?domain=pub.test');
  await s.deployment.get(Database).transaction((tx) =>
    s.deployment.get(BrandJsonRecords).record(tx, 'house.example', {
      house: { domain: 'house.example', name: 'House' },
      brands: [{ id: 'h', names: [{ en: 'House' }], domains: ['house.example'] }],
    }),
  );
  await get('/api/brands/brand-json', '/api/brands/brand-json?domain=house.example');

  // Properties.
  await post('/api/properties/save', {
    publisher_domain: 'hosted.example',
    authorized_agents: [{ url: 'https://agent.pub.test/mcp' }],
    properties: [{ type: 'website', name: 'Hosted', identifiers: [{ type: 'domain', value: 'hosted.example' }] }],
  });
  await post('/api/properties/save', { publisher_domain: 'hosted.example', authorized_agents: [] });
  await get('/api/properties/resolve', '/api/properties/resolve?domain=hosted.example');
  await post('/api/properties/resolve/bulk', { domains: ['hosted.example'] });
  const checkReport = await post('/api/properties/check', { domains: ['www.hosted.example', 'new.example', 'doubleclick.net'] });
  await get('/api/properties/check/{reportId}', `/api/properties/check/${checkReport.body.report_id}`);

  // Policies.
  const policy = { policy_id: 'doc_policy', version: '1.0.0', name: 'Doc policy', category: 'standard', enforcement: 'may', policy: 'Text.' };
  await post('/api/policies/save', policy);
  await post('/api/policies/save', { ...policy, version: '1.0.1', guidance: 'More', exemplars: { pass: [{ scenario: 'a', explanation: 'b' }] } });
  await get('/api/policies/registry', '/api/policies/registry?category=standard');
  await get('/api/policies/resolve', '/api/policies/resolve?policy_id=doc_policy');
  expect((await get('/api/policies/resolve', '/api/policies/resolve?policy_id=doc_policy&version=9')).status).toBe(404);
  await post('/api/policies/resolve/bulk', { policy_ids: ['doc_policy', 'missing'] });
  await get('/api/policies/history', '/api/policies/history?policy_id=doc_policy');
  await get('/api/properties/history', '/api/properties/history?domain=hosted.example');
  await get('/api/properties/diff', '/api/properties/diff?domain=hosted.example');
  await post('/api/properties/{domain}/rollback', { to_revision: 1 }, '/api/properties/hosted.example/rollback');
  await get('/api/properties/registry');

  // Crawl pub.test through the queued request (its brand.json is missing: fine) so discovery has data.
  const crawl = await post('/api/registry/crawl-request', { domain: 'pub.test' });
  expect(crawl.status).toBe(202);
  const requestId = crawl.body.request_id;
  await s.deployment.get(Discovery).projectAdagents(
    'pub.test',
    {
      authorized_agents: [{ url: 'https://agent.pub.test/mcp', authorized_for: 'All', authorization_type: 'property_ids', property_ids: ['home'] }],
      properties: [{ property_id: 'home', property_type: 'website', name: 'Home', identifiers: [{ type: 'domain', value: 'pub.test' }] }],
    },
    { valid: true, now: new Date() },
  );
  await get('/api/registry/crawl-request/{id}', `/api/registry/crawl-request/${requestId}`, t);

  // Agent discovery.
  await call('POST', '/api/registry/agents', '/api/registry/agents', {
    ...t,
    json: { url: 'https://agent.pub.test/mcp', name: 'Stub', type: 'sales', operator_domain: 'pub.test', inventory: { channels: ['display'] } },
  });
  await get('/api/registry/agents', '/api/registry/agents?capabilities=true&health=true&compliance=true&verification=true');
  await get('/api/registry/agents/checks', `/api/registry/agents/checks?url=${encodeURIComponent('https://agent.pub.test/mcp')}`);
  const encodedAgent = encodeURIComponent('https://agent.pub.test/mcp');
  await get('/api/registry/agents/{agentUrl}/compliance', `/api/registry/agents/${encodedAgent}/compliance`);
  await get('/api/registry/agents/{agentUrl}/storyboard-status', `/api/registry/agents/${encodedAgent}/storyboard-status`, t);
  await post('/api/registry/agents/storyboard-status', { agent_urls: ['https://agent.pub.test/mcp'] });
  await get('/api/registry/agents/search', '/api/registry/agents/search?channels=display', t);
  await get('/api/registry/publishers');
  await get('/api/registry/collections', '/api/registry/collections?publisher_domain=pub.test');
  await get('/api/registry/stats');
  await get('/api/registry/operator', '/api/registry/operator?domain=pub.test');
  await get('/api/registry/publisher', '/api/registry/publisher?domain=pub.test');

  // Lookups.
  await get('/api/registry/lookup/domain/{domain}', '/api/registry/lookup/domain/pub.test');
  await get('/api/registry/lookup/domain/{domain}', '/api/registry/lookup/domain/hosted.example');
  await get('/api/registry/lookup/domain/{domain}', '/api/registry/lookup/domain/nobody.example');
  await get('/api/registry/lookup/property', '/api/registry/lookup/property?type=domain&value=pub.test');
  await get('/api/registry/lookup/agent/{agentUrl}/domains', `/api/registry/lookup/agent/${encodeURIComponent('https://agent.pub.test/mcp')}/domains`);
  await get(
    '/api/registry/validate/property-authorization',
    `/api/registry/validate/property-authorization?agent_url=${encodeURIComponent('https://agent.pub.test/mcp')}&identifier_type=domain&identifier_value=pub.test`,
  );
  const selector = { agent_url: 'https://agent.pub.test/mcp', publisher_properties: [{ publisher_domain: 'pub.test', selection_type: 'all' }] };
  await post('/api/registry/validate/product-authorization', selector);
  await post('/api/registry/expand/product-identifiers', selector);

  // Validation tools and search.
  await post('/api/adagents/validate', { domain: 'pub.test' });
  expect((await post('/api/adagents/create', { authorized_agents: [{ url: 'https://agent.pub.test/mcp', authorized_for: 'All' }] })).status).toBe(400);
  await post('/api/adagents/create', {
    authorized_agents: [{ url: 'https://agent.pub.test/mcp', authorized_for: 'All', authorization_type: 'property_ids', property_ids: ['home'] }],
    properties: [{ property_id: 'home', property_type: 'website', name: 'Home', identifiers: [{ type: 'domain', value: 'pub.test' }] }],
  });
  await get('/api/properties/validate', '/api/properties/validate?domain=pub.test');
  await get('/api/search', '/api/search?q=acme');
  await get('/api/manifest-refs/lookup', '/api/manifest-refs/lookup?domain=pub.test');

  // Feed and ownership.
  await get('/api/registry/feed', '/api/registry/feed?limit=5', t);
  await get('/api/registry/feed/recent', '/api/registry/feed/recent?limit=5', t);
  await post('/api/ownership/challenge', { domain: 'owned.example' });
  await get('/api/ownership/status', '/api/ownership/status?domain=owned.example', t);
  const verify = await post('/api/ownership/verify', { domain: 'owned.example', method: 'http' });
  expect(verify.status).toBe(422);

  // Probes (an MCP agent on loopback TLS, a publisher file).
  const agent = encodeURIComponent(`https://agent.pub.test:${upstream.port}/mcp`);
  await get('/api/public/discover-agent', `/api/public/discover-agent?url=${agent}`);
  await get('/api/public/agent-formats', `/api/public/agent-formats?url=${agent}`);
  await get('/api/public/agent-products', `/api/public/agent-products?url=${agent}&brief=news`);
  await get('/api/public/validate-publisher', '/api/public/validate-publisher?domain=pub.test');

  // Errors match the Error schema too.
  expect((await get('/api/brands/history', '/api/brands/history?domain=acme.example&limit=101')).status).toBe(400);
  expect((await call('POST', '/api/brands/save', '/api/brands/save', { json: {} })).status).toBe(401);

  // Removal last (it empties the catalog).
  await call('DELETE', '/api/registry/agents', `/api/registry/agents?url=${encodeURIComponent('https://agent.pub.test/mcp')}`, t);

  const documented = Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
  const missing = documented.filter((op) => !checked.has(op) && op !== 'POST /api/ownership/verify');
  expect(missing).toEqual([]);
});

test('the document: integers with bounds, security per operation, servers, 413/415 on bodies, consistent tags', () => {
  expect(doc.servers).toEqual([{ url: s.base }]);
  expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['bearerAuth', 'oauth2']);
  expect(doc.components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl).toMatch(/\/token$/);
  const history = doc.paths['/api/brands/history'].get;
  expect(history.security).toEqual([]);
  expect(history.parameters.find((p: any) => p.name === 'limit').schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
  expect(history.parameters.find((p: any) => p.name === 'offset').schema).toMatchObject({ type: 'integer', minimum: 0 });
  expect(doc.paths['/api/brands/save'].post.security).toEqual([{ bearerAuth: [] }, { oauth2: [] }]);
  expect(doc.paths['/api/registry/agents'].get.security).toEqual([{}, { bearerAuth: [] }, { oauth2: [] }]);
  expect(Object.keys(doc.paths['/api/brands/save'].post.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '409', '413', '415', '429']));
  for (const [path, ops] of Object.entries(doc.paths) as [string, any][]) {
    for (const op of Object.values(ops) as any[]) {
      expect(op.security, path).toBeDefined();
      const ok = Object.keys(op.responses).find((c) => c.startsWith('2'));
      if (path !== '/openapi/registry.yaml') expect(op.responses[ok!].content?.['application/json']?.schema, `${path} declares its response`).toBeDefined();
    }
  }
  const tags = new Set(doc.tags.map((x: any) => x.name));
  for (const ops of Object.values(doc.paths) as any[])
    for (const op of Object.values(ops) as any[]) for (const tag of op.tags ?? []) expect(tags.has(tag)).toBe(true);
  expect(doc.paths['/health'].get.responses['200']).toBeDefined();
});
