import { expect, test } from 'bun:test';
import preset, { SANDBOX_BRANDS } from '../../config/test-agent.ts';
import { forEachDatabase } from '../support/db.ts';
import { mcpClient } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';

// The brand path of the test agent answers for every sandbox brand it seeds, including the AdCP test
// kits' Nova Motors (nova-motors.yaml: brand_baseline asks any brand agent for brand_id nova_motors),
// anonymously (get_brand_identity is public), in both schema versions.
forEachDatabase<TestServer>(
  'test agent sandbox brands',
  (adapter, schema) => startServer(adapter, schema, preset.plugins.slice(1), { env: { PROTOCOL_NAMESPACE: 'adcp' } }),
  (s) => s.close(),
  (get) => {
    test('every represented sandbox brand resolves on /brand/mcp; an unknown one is REFERENCE_NOT_FOUND', async () => {
      expect(SANDBOX_BRANDS.map((b) => b.brand_id)).toContain('nova_motors');
      const brand = await mcpClient(get(), null, '/brand/mcp');
      for (const { brand_id } of SANDBOX_BRANDS) {
        const identity = await brand.call('get_brand_identity', { brand_id });
        expect(identity.ok).toBe(true);
        expect(identity.body.brand_id).toBe(brand_id);
        expect(identity.body.names.length).toBeGreaterThan(0);
        expect(bothVersionsErrors('brand/get-brand-identity-response.json', identity.body)).toEqual([]);
      }
      const nova = await brand.call('get_brand_identity', { brand_id: 'nova_motors' });
      expect(nova.body).toMatchObject({ house: { domain: 'novamotors.example', name: 'Nova Motors' }, names: [{ en: 'Nova Motors' }] });
      // Brands have no dedicated not-found code: error-code.json (3.0.6 and 3.1.19) says REFERENCE_NOT_FOUND.
      const unknown = await brand.call('get_brand_identity', { brand_id: 'brand_that_does_not_exist_12345' });
      expect(unknown.ok).toBe(false);
      expect(unknown.body.errors[0].code).toBe('REFERENCE_NOT_FOUND');
      expect(bothVersionsErrors('brand/get-brand-identity-response.json', unknown.body)).toEqual([]);
      await brand.close();
    });
  },
);
