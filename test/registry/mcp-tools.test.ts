import { expect, test } from 'bun:test';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Database } from '../../core/ports/database.ts';
import { sql } from '../../core/sql.ts';
import auth from '../../plugins/auth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import restHost from '../../hosts/rest/index.ts';
import mcpEndpoints from '../../hosts/mcp-endpoints/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';

async function connect(s: TestServer, key: string | null) {
  const client = new McpClient({ name: 'registry-tools', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), { requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} } }),
  );
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = (await client.callTool({ name, arguments: args })) as any;
    expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
    return { ok: !r.isError, body: r.structuredContent as Record<string, any> };
  };
  return { client, call };
}

forEachDatabase(
  'registry MCP tools',
  (adapter, schema) =>
    startServer(adapter, schema, [
      auth(),
      rateLimit(),
      registryBrands(),
      registryProperties(),
      searchPostgres(),
      registryAgents(),
      registryFeed({ sequenceIntervalMs: 0 }),
      restHost(),
      mcpEndpoints(),
    ]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();

    test('tools are the endpoint definitions: listed with their arguments, results identical to REST', async () => {
      const { key } = await newKey(s().deployment);
      const { client, call } = await connect(s(), key);
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of [
        'resolve_brand',
        'resolve_property',
        'save_brand',
        'save_property',
        'brand_history',
        'list_agents',
        'search_agents',
        'lookup_domain',
        'lookup_property',
        'validate_property_authorization',
        'validate_product_authorization',
        'read_feed',
      ])
        expect(names).toContain(name);
      const history = tools.find((t) => t.name === 'brand_history')!;
      expect(history.inputSchema).toMatchObject({
        type: 'object',
        required: ['domain'],
        properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, offset: { type: 'integer', minimum: 0 } },
      });
      expect(tools.find((t) => t.name === 'save_brand')!.inputSchema.required).toEqual(['domain', 'brand_name']);

      expect((await call('save_brand', { domain: 'MCP-Tools.example', brand_name: 'Tools' })).body).toMatchObject({
        success: true,
        domain: 'mcp-tools.example',
      });
      await call('save_brand', { domain: 'mcp-tools.example', brand_name: 'Tools 2', edit_summary: 'rename' });
      const viaTool = await call('resolve_brand', { domain: 'mcp-tools.example' });
      const viaRest = await (await s().fetch('/api/brands/resolve?domain=mcp-tools.example')).json();
      expect(viaTool).toEqual({ ok: true, body: viaRest });
      const revisions = await call('brand_history', { domain: 'mcp-tools.example', limit: 1 });
      expect(revisions.body.revisions.map((r: any) => r.revision_number)).toEqual([2]);
      expect(revisions.body.total).toBe(2);

      await call('save_property', {
        publisher_domain: 'mcp-pub.example',
        authorized_agents: [{ url: 'https://sales.mcp-pub.example/mcp' }],
        properties: [{ type: 'website', name: 'MCP Pub', identifiers: [{ type: 'domain', value: 'mcp-pub.example' }] }],
      });
      expect((await call('resolve_property', { domain: 'mcp-pub.example' })).body.publisher_domain).toBe('mcp-pub.example');
      const catalog = await call('list_agents', { capabilities: true });
      expect(catalog.body).toEqual(await (await s().fetch('/api/registry/agents?capabilities=true', { token: key })).json());
      expect((await call('search_agents', { channels: 'display', limit: 5 })).ok).toBe(true);
      const feed = await call('read_feed', { types: 'brand.*', limit: 10 });
      expect(feed.body.events.map((e: any) => e.event_type)).toContain('brand.created');
      await client.close();
    });

    test('bad arguments are tool errors naming the field; nothing is written', async () => {
      const { key } = await newKey(s().deployment);
      const { client, call } = await connect(s(), key);
      const count = async () => (await s().deployment.get(Database).query<{ n: number }>(sql`SELECT count(*)::int AS n FROM brands`))[0]!.n;
      const before = await count();
      const bad = await call('save_brand', { domain: 'not a domain', brand_name: 'X' });
      expect(bad.ok).toBe(false);
      expect(bad.body).toMatchObject({ error: 'invalid_request', code: 'INVALID_REQUEST' });
      expect(bad.body.message).toContain('domain');
      const limit = await call('brand_history', { domain: 'mcp-tools.example', limit: 1000 });
      expect(limit.ok).toBe(false);
      expect(limit.body.message).toContain('limit');
      expect((await call('resolve_brand', { domain: 'unknown-brand.example' })).body).toMatchObject({ error: 'not_found' });
      expect(await count()).toBe(before);
      await client.close();
    });

    test('the same auth as REST: anonymous public tools, 401 with a challenge for member tools, 403 for too little standing', async () => {
      const anonymous = await connect(s(), null);
      expect((await anonymous.call('resolve_brand', { domain: 'mcp-tools.example' })).ok).toBe(true);
      const refused = anonymous.call('save_brand', { domain: 'anon.example', brand_name: 'Anon' });
      await expect(refused).rejects.toBeInstanceOf(StreamableHTTPError);
      await anonymous.client.close();

      const raw = await s().fetch('/mcp', {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream' },
        json: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'read_feed', arguments: {} } },
      });
      expect(raw.status).toBe(401);
      expect(raw.headers.get('www-authenticate')).toStartWith('Bearer');
      expect((await raw.json()).id).toBe(7);
      const invalid = await s().fetch('/mcp', {
        method: 'POST',
        token: 'proto_not-a-key',
        headers: { accept: 'application/json, text/event-stream' },
        json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      expect(invalid.status).toBe(401);

      const pub = await newKey(s().deployment, 'public');
      const outsider = await connect(s(), pub.key);
      const denied = await outsider.call('save_brand', { domain: 'standing.example', brand_name: 'S' });
      expect(denied).toMatchObject({ ok: false, body: { error: 'permission_denied' } });
      await outsider.client.close();
    });
  },
);
