import { expect, test } from 'bun:test';
import auth from '../../plugins/auth/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { Discovery } from '../../core/ports/discovery.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

const AGENT = 'https://sales.hosted-seller.example/mcp';

forEachDatabase(
  'hosted properties in lookups',
  (adapter, schema) => startServer(adapter, schema, [auth(), rateLimit(), registryProperties(), searchPostgres(), registryAgents(), restHost()]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();
    const json = async (path: string) => {
      const res = await s().fetch(path);
      expect(res.status).toBe(200);
      return res.json() as Promise<Record<string, any>>;
    };

    test('lookup/domain answers for hosted publishers, and 200 with empty lists for unknown domains', async () => {
      const { key } = await newKey(s().deployment);
      const saved = await s().fetch('/api/properties/save', {
        method: 'POST',
        token: key,
        json: {
          publisher_domain: 'hosted-pub.example',
          authorized_agents: [{ url: AGENT, authorized_for: 'display' }],
          properties: [{ type: 'website', name: 'Hosted Pub', identifiers: [{ type: 'domain', value: 'hosted-pub.example' }] }],
        },
      });
      expect(saved.status).toBe(200);
      expect(await json('/api/registry/lookup/domain/hosted-pub.example')).toEqual({
        domain: 'hosted-pub.example',
        source: 'hosted',
        adagents_valid: false,
        authorized_agents: [{ url: AGENT, authorized_for: 'display', delegation_types: [] }],
        sales_agents_claiming: [],
        count: 1,
      });
      expect(await json('/api/registry/lookup/domain/never-heard-of.example')).toEqual({
        domain: 'never-heard-of.example',
        authorized_agents: [],
        sales_agents_claiming: [],
      });
    });

    test('validate/property-authorization counts a hosted entry as the publisher side', async () => {
      const check = (agent: string) =>
        json(`/api/registry/validate/property-authorization?agent_url=${encodeURIComponent(agent)}&identifier_type=domain&identifier_value=hosted-pub.example`);
      const listed = await check(AGENT);
      expect(listed.checks.publisher).toMatchObject({ ok: true, authorized_for: 'display' });
      expect(listed).toMatchObject({ authorized: false, failed_side: 'operator', publisher_domain: 'hosted-pub.example' });
      const stranger = await check('https://someone-else.example/mcp');
      expect(stranger).toMatchObject({ authorized: false, failed_side: 'both' });
      expect(stranger.checks.publisher.reason).toContain('hosted entry of hosted-pub.example does not list this agent');

      // The operator's brand.json names the agent and declares the property: both sides pass.
      await s()
        .deployment.get(Discovery)
        .projectBrandJson(
          'hosted-seller.example',
          {
            house: { domain: 'hosted-seller.example', name: 'Seller' },
            agents: [{ type: 'sales', url: AGENT }],
            properties: [{ type: 'website', identifier: 'hosted-pub.example', relationship: 'delegated' }],
          },
          { valid: true, now: new Date() },
        );
      expect(await check(AGENT)).toMatchObject({ authorized: true, failed_side: null });
    });
  },
);
