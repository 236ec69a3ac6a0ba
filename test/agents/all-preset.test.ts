import { expect, test } from 'bun:test';
import preset from '../../config/all.ts';
import { TENANTS } from '../../config/test-agent.ts';
import { ManualTimers } from '../../core/scheduler.ts';
import { forEachDatabase } from '../support/db.ts';
import { mcpClient, restClient } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';

// The preset's own plugin list, minus its storage entry (the test server adds an isolated one).
forEachDatabase<TestServer>(
  'all-in-one preset',
  (adapter, schema) =>
    startServer(adapter, schema, preset.plugins.slice(1), { env: { PROTOCOL_NAMESPACE: 'adcp', OWNERSHIP_PROOF: 'off' }, timers: new ManualTimers() }),
  (s) => s.close(),
  (get) => {
    test('the registry API and every agent path in one process on one database, with organization API keys', async () => {
      const s = get();
      const { key } = await newKey(s.deployment);
      // Registry: a saved brand is at once the brand agent's and the creative agent's.
      const saved = await s.fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'trial-brand.example', brand_name: 'Trial Brand' } });
      expect(saved.status).toBe(200);
      expect(((await (await s.fetch('/api/brands/resolve?domain=acme-outdoor.example')).json()) as any).brand_name).toBe('Acme Outdoor');
      const adagents = (await (await s.fetch('/.well-known/adagents.json')).json()) as any;
      expect(adagents.tenants.map((t: any) => t.id)).toEqual(TENANTS.map((t) => t.id));
      for (const t of TENANTS) {
        const mcp = await mcpClient(s, key, `/${t.id}/mcp`);
        const caps = await mcp.call('get_adcp_capabilities', {});
        expect({ id: t.id, ok: caps.ok }).toEqual({ id: t.id, ok: true });
        await mcp.close();
      }
      const sales = restClient(s, key, '/sales');
      expect((await sales.call('get_products', { buying_mode: 'brief', brief: 'podcasts' })).body.products.length).toBeGreaterThan(0);
      const brand = restClient(s, key, '/brand');
      expect((await brand.call('get_brand_identity', { brand_id: 'nimbus_cola' })).body.tagline).toBe('Light as a cloud');
      // Agent tasks need a credential (capabilities and tools/list do not).
      expect((await restClient(s, null, '/sales').call('get_products', { buying_mode: 'brief', brief: 'x' })).body.code).toBe('AUTH_REQUIRED');
    });
  },
);
