import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { DiscoveryPort } from '../../core/ports/discovery.ts';

export interface DiscoverySubject {
  port: DiscoveryPort;
  db: DatabasePort;
  close(): Promise<void>;
}

const NOW = new Date('2026-01-01T00:00:00Z');
const SALES = 'https://sales.example.com/mcp';
const SIGNALS = 'https://signals.example.com';

const adagents = () => ({
  properties: [
    { property_id: 'news', property_type: 'website', name: 'News', identifiers: [{ type: 'domain', value: 'news.example' }], tags: ['premium'] },
    { property_id: 'app', property_type: 'mobile_app', name: 'App', identifiers: [{ type: 'bundle_id', value: 'com.example.app' }], tags: ['mobile'] },
  ],
  authorized_agents: [
    {
      url: 'https://Sales.Example.com/mcp/',
      authorized_for: 'All inventory',
      authorization_type: 'property_tags',
      property_tags: ['premium', 'mobile'],
      delegation_type: 'delegated',
    },
    {
      url: SIGNALS,
      authorized_for: 'Signals',
      authorization_type: 'signal_ids',
      signal_ids: [{ source: 'catalog', data_provider_domain: 'example.com', id: 's1' }],
    },
  ],
});

/** The discovery port contract (core/ports/discovery.ts): what the crawl pipeline writes and reads. */
export function discoveryContract(name: string, make: () => Promise<DiscoverySubject>): void {
  describe(`discovery contract: ${name}`, () => {
    let s: DiscoverySubject;
    beforeAll(async () => {
      s = await make();
      await s.db.query(sql`CREATE TABLE contract_marks (domain text)`);
    });
    afterAll(async () => {
      await s?.close();
    });
    const marks = async () => (await s.db.query<{ domain: string }>(sql`SELECT domain FROM contract_marks ORDER BY domain`)).map((r) => r.domain);

    test('a first adagents.json: publisher, properties, agents (URLs normalized), authorizations; inTransaction commits with it', async () => {
      const diff = await s.port.projectAdagents('example.com', adagents(), {
        valid: true,
        now: NOW,
        inTransaction: async (tx, d) => {
          expect(d.publisher.domain).toBe('example.com');
          await tx.query(sql`INSERT INTO contract_marks VALUES ('example.com')`);
        },
      });
      expect(diff.publisher).toMatchObject({ domain: 'example.com', created: true, valid: true });
      expect(diff.properties.created.map((p) => p.property_key).sort()).toEqual(['app', 'news']);
      expect(diff.agents_discovered.map((a) => a.agent_url).sort()).toEqual([SALES, SIGNALS]);
      expect(diff.authorizations.granted).toHaveLength(2);
      expect(diff.profiles.changed.map((p) => p.agent_url).sort()).toEqual([SALES, SIGNALS]);
      expect(await marks()).toEqual(['example.com']);
      expect(await s.port.isKnownPublisher('example.com')).toBe(true);
      expect(await s.port.publishers()).toContainEqual({ domain: 'example.com', lastValidated: NOW });
    });

    test('when inTransaction throws, nothing is projected and the error comes back', async () => {
      const boom = new Error('feed append failed');
      await expect(
        s.port.projectAdagents('rolled-back.example', adagents(), {
          valid: true,
          now: NOW,
          inTransaction: async (tx) => {
            await tx.query(sql`INSERT INTO contract_marks VALUES ('rolled-back.example')`);
            throw boom;
          },
        }),
      ).rejects.toBe(boom);
      expect(await s.port.isKnownPublisher('rolled-back.example')).toBe(false);
      expect(await marks()).toEqual(['example.com']);
    });

    test('the same document again changes nothing', async () => {
      const diff = await s.port.projectAdagents('example.com', adagents(), { valid: true, now: NOW });
      expect(diff.publisher).toMatchObject({ created: false, changed: false });
      expect(diff.properties).toEqual({ created: [], updated: [], stale: [], reactivated: [] });
      expect(diff.agents_discovered).toEqual([]);
      expect(diff.authorizations).toEqual({ granted: [], revoked: [], modified: [] });
      expect(diff.profiles.changed).toEqual([]);
    });

    test('an invalid file makes every active property stale; a valid one reactivates them', async () => {
      const bad = await s.port.projectAdagents('example.com', { nonsense: true }, { valid: false, errors: ['x'], now: NOW });
      expect(bad.publisher.valid).toBe(false);
      expect(bad.properties.stale.map((p) => p.property_key).sort()).toEqual(['app', 'news']);
      const good = await s.port.projectAdagents('example.com', adagents(), { valid: true, now: NOW });
      expect(good.properties.reactivated.map((p) => p.property_key).sort()).toEqual(['app', 'news']);
    });

    test('an agent dropped from the file leaves its profile; a changed authorization is reported as modified', async () => {
      const doc = adagents();
      (doc.authorized_agents[0] as any).delegation_type = 'direct';
      doc.authorized_agents = [doc.authorized_agents[0]!];
      const diff = await s.port.projectAdagents('example.com', doc, { valid: true, now: NOW });
      expect(diff.authorizations.modified.map((a) => [a.agent_url, a.delegation_type])).toEqual([
        [SALES, 'direct'],
        [SALES, 'direct'],
      ]);
      expect(diff.profiles.removed.map((r) => r.agent_url)).toEqual([SIGNALS]);
    });

    test('agentState: a discovered agent is known but not enrolled, without capabilities; an unknown one is null', async () => {
      const state = await s.port.agentState(s.db, SALES);
      expect(state).toMatchObject({ enrolled: false, capabilities: { creative_capabilities: null, signals_capabilities: null, metrics: [] } });
      expect(state!.id).toBeString();
      expect(await s.port.agentState(s.db, 'https://unknown.example/mcp')).toBeNull();
      expect(await s.db.transaction((tx) => s.port.agentState(tx, SALES, true))).toEqual(state);
    });

    test('recordAgentCapabilities stores catalogs of known agents only; enrolledAgents lists enrolled agents only', async () => {
      const caps = { signals_capabilities: { signals: ['s1'] }, creative_capabilities: null, metrics: [{ metric_id: 'viewability' }] };
      expect(await s.db.transaction((tx) => s.port.recordAgentCapabilities(tx, 'https://unknown.example/mcp', caps, NOW))).toBe(false);
      expect(await s.db.transaction((tx) => s.port.recordAgentCapabilities(tx, SALES, caps, NOW))).toBe(true);
      expect((await s.port.agentState(s.db, SALES))!.capabilities).toEqual(caps);
      expect((await s.port.enrolledAgents()).map((a) => a.url)).not.toContain(SALES);
    });

    test('brand.json: operator properties and agents, inTransaction in the same transaction; again, no change', async () => {
      const brand = {
        house: { domain: 'operator.example', name: 'Operator' },
        brands: [
          {
            id: 'op',
            names: [{ en: 'Operator Brand' }],
            properties: [{ type: 'website', identifier: 'News.Example', relationship: 'delegated' }],
            agents: [{ type: 'sales', url: SALES }],
          },
        ],
      };
      const boom = new Error('abort');
      await expect(s.port.projectBrandJson('operator.example', brand, { valid: true, now: NOW, inTransaction: async () => Promise.reject(boom) })).rejects.toBe(
        boom,
      );
      const diff = await s.port.projectBrandJson('operator.example', brand, { valid: true, now: NOW });
      expect(diff).toMatchObject({ domain: 'operator.example', created: true });
      expect(diff.properties.added).toEqual([{ property_type: 'website', identifier: 'news.example', relationship: 'delegated', brand_id: 'op' }]);
      expect(diff.agents.added).toEqual([SALES]);
      const again = await s.port.projectBrandJson('operator.example', brand, { valid: true, now: NOW });
      expect(again).toMatchObject({ created: false, properties: { added: [], removed: [], changed: [] }, agents: { added: [], removed: [] } });
    });
  });
}
