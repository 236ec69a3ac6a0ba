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

    test('verify_brand_claim(s) on /brand/mcp answer from the sandbox brand.json, signed with the published response-signing key', async () => {
      const brand = await mcpClient(get(), null, '/brand/mcp');
      const parent = await brand.call('verify_brand_claim', {
        brand_id: 'acme_outdoor',
        claim_type: 'parent',
        claim: { parent_domain: 'acme-holdings.example' },
      });
      expect(parent.body).toMatchObject({ claim_type: 'parent', verification_status: 'owned', details: { house_domain: 'acme-holdings.example' } });
      expect(bothVersionsErrors('brand/verify-brand-claim-response.json', parent.body)).toEqual([]);
      const batch = await brand.call('verify_brand_claims', {
        brand_id: 'acme_outdoor',
        claims: [
          { claim_type: 'property', claim: { property: { type: 'website', identifier: 'acme-outdoor.example' } } },
          { claim_type: 'trademark', claim: { mark: 'Acme Outdoor', countries: ['US'] } },
          { claim_type: 'property', claim: { property: { type: 'website', identifier: 'nimbus-cola.example' } } },
        ],
      });
      expect(batch.body.results.map((r: { status: string }) => r.status)).toEqual(['owned', 'owned', 'not_ours']);
      expect(bothVersionsErrors('brand/verify-brand-claims-response.json', batch.body)).toEqual([]);
      const jwks = (await (await get().fetch('/.well-known/jwks.json')).json()) as { keys: Array<Record<string, unknown>> };
      for (const body of [parent.body, batch.body]) {
        const { kid } = JSON.parse(Buffer.from(body.signed_response.protected, 'base64url').toString());
        expect(jwks.keys.find((k) => k.kid === kid)?.adcp_use).toBe('response-signing');
        expect(body.signed_response.payload.brand_domain).toBe('acme-outdoor.example');
        expect(body.signed_response.payload.agent_url).toMatch(/\/brand\/mcp$/);
      }
      await brand.close();
    });
  },
);
