import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { sql } from '../../core/sql.ts';
import { loadMigrations } from '../../core/migrations.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import { forEachDatabase, openDatabase } from '../support/db.ts';
import { upsertPublisherFromAdagents, upsertOperatorFromBrandJson } from '../../plugins/registry-agents/projection.ts';
import { normalizeAgentUrl } from '../../plugins/registry-agents/urls.ts';
import { defaultIds } from '../../core/ports/ids.ts';

const migrations = loadMigrations(join(import.meta.dir, '../../plugins/registry-agents/migrations'));
const now = new Date('2026-01-01T00:00:00Z');

const doc = (overrides: Record<string, unknown> = {}) => ({
  properties: [
    {
      property_id: 'news',
      property_type: 'website',
      name: 'News',
      identifiers: [{ type: 'domain', value: 'news.example' }],
      tags: ['premium'],
      supported_channels: ['display'],
    },
    { property_id: 'app', property_type: 'mobile_app', name: 'App', identifiers: [{ type: 'bundle_id', value: 'com.example.app' }], tags: ['mobile'] },
  ],
  authorized_agents: [
    {
      url: 'https://Sales.Example.com/mcp/',
      authorized_for: 'All inventory',
      authorization_type: 'property_tags',
      property_tags: ['premium', 'mobile'],
      delegation_type: 'delegated',
      countries: ['US'],
    },
    {
      url: 'https://signals.example.com',
      authorized_for: 'Signals',
      authorization_type: 'signal_ids',
      signal_ids: [{ source: 'catalog', data_provider_domain: 'example.com', id: 's1' }],
    },
  ],
  ...overrides,
});

forEachDatabase(
  'discovery projection',
  async (adapter, schema) => {
    const db = await openDatabase(adapter, schema);
    await db.migrate('registry-agents', migrations);
    return db;
  },
  (db) => db.close(),
  (get) => {
    const db = (): DatabasePort => get();

    test('normalizes agent URLs so one agent is one row', () => {
      expect(normalizeAgentUrl('HTTPS://Sales.Example.COM:443/mcp/')).toBe('https://sales.example.com/mcp');
      expect(normalizeAgentUrl('https://sales.example.com/mcp#x')).toBe('https://sales.example.com/mcp');
      expect(normalizeAgentUrl('ftp://x.example')).toBeNull();
      expect(normalizeAgentUrl('https://u:p@x.example')).toBeNull();
      // Escapes decoded into dot segments and repeated slashes resolve as if written plainly.
      expect(normalizeAgentUrl('https://h.example/a/%2E%2E/b')).toBe('https://h.example/b');
      expect(normalizeAgentUrl('https://h.example/x//a')).toBe('https://h.example/x/a');
      expect(normalizeAgentUrl('https://h.example/%70rivate-a/')).toBe('https://h.example/private-a');
      expect(normalizeAgentUrl('https://h.example/a/%2e%2E%2Fb')).toBe('https://h.example/a/..%2Fb');
    });

    test('first projection creates properties, discovers agents, grants authorizations and builds profiles', async () => {
      const diff = await db().transaction((tx) => upsertPublisherFromAdagents(tx, 'Example.com', doc(), { valid: true, now }, defaultIds.uuid7));
      expect(diff.publisher.created).toBe(true);
      expect(diff.properties.created.map((p) => p.property_key).sort()).toEqual(['app', 'news']);
      expect(diff.agents_discovered.map((a) => a.agent_url).sort()).toEqual(['https://sales.example.com/mcp', 'https://signals.example.com']);
      expect(diff.authorizations.granted).toHaveLength(2);
      expect(diff.authorizations.granted.every((g) => g.delegation_type === 'delegated' && g.publisher_domain === 'example.com')).toBe(true);
      const sales = diff.profiles.changed.find((p) => p.agent_url === 'https://sales.example.com/mcp')!;
      expect(sales.property_count).toBe(2);
      expect(sales.publisher_count).toBe(1);
      expect(sales.property_types).toEqual(['mobile_app', 'website']);
      expect(sales.markets).toEqual(['US']);
      expect(sales.channels).toEqual(['display']);
      const signals = diff.profiles.changed.find((p) => p.agent_url === 'https://signals.example.com')!;
      expect(signals.property_count).toBe(0);
      expect(signals.publisher_count).toBe(1);
    });

    test('projecting the same document again is a no-op diff', async () => {
      const diff = await db().transaction((tx) => upsertPublisherFromAdagents(tx, 'example.com', doc(), { valid: true, now }, defaultIds.uuid7));
      expect(diff.publisher.changed).toBe(false);
      expect(diff.properties).toEqual({ created: [], updated: [], stale: [], reactivated: [] });
      expect(diff.agents_discovered).toEqual([]);
      expect(diff.authorizations).toEqual({ granted: [], revoked: [], modified: [] });
      expect(diff.profiles.changed).toEqual([]);
    });

    test('a changed file updates properties, modifies and revokes authorizations', async () => {
      const d = doc();
      d.properties[0]!.name = 'News (renamed)';
      (d.authorized_agents[0] as any).delegation_type = 'direct';
      (d.authorized_agents[0] as any).property_tags = ['premium'];
      const diff = await db().transaction((tx) => upsertPublisherFromAdagents(tx, 'example.com', d, { valid: true, now }, defaultIds.uuid7));
      expect(diff.properties.updated.map((p) => p.name)).toEqual(['News (renamed)']);
      expect(diff.authorizations.modified.map((a) => a.delegation_type)).toEqual(['direct']);
      expect(diff.authorizations.revoked).toHaveLength(1);
      expect(diff.profiles.changed.find((p) => p.agent_url === 'https://sales.example.com/mcp')!.property_count).toBe(1);
    });

    test('an invalid file makes active properties stale; a valid one reactivates them', async () => {
      const bad = await db().transaction((tx) =>
        upsertPublisherFromAdagents(tx, 'example.com', { nonsense: true }, { valid: false, errors: ['x'], now }, defaultIds.uuid7),
      );
      expect(bad.properties.stale.map((p) => p.property_key).sort()).toEqual(['app', 'news']);
      // No valid file names them any more: their profiles leave the search index.
      expect(bad.profiles.removed.map((r) => r.agent_url).sort()).toEqual(['https://sales.example.com/mcp', 'https://signals.example.com']);
      const good = await db().transaction((tx) => upsertPublisherFromAdagents(tx, 'example.com', doc(), { valid: true, now }, defaultIds.uuid7));
      expect(good.properties.reactivated.map((p) => p.property_key).sort()).toEqual(['app', 'news']);
      const [row] = await db().query<{ n: number }>(sql`SELECT count(*)::int AS n FROM registry_properties WHERE status = 'active'`);
      expect(row!.n).toBe(2);
    });

    test('an agent removed from the file is revoked and unlinked', async () => {
      const d = doc();
      d.authorized_agents = [d.authorized_agents[0]!];
      const diff = await db().transaction((tx) => upsertPublisherFromAdagents(tx, 'example.com', d, { valid: true, now }, defaultIds.uuid7));
      expect(diff.authorizations.revoked).toEqual([]);
      const removed = diff.profiles.removed.map((r) => r.agent_url);
      expect(removed).toEqual(['https://signals.example.com']);
    });

    test('brand.json projection records property relationships and operated agents', async () => {
      const brand = {
        house: { domain: 'operator.example', name: 'Operator' },
        brands: [
          {
            id: 'op',
            names: [{ en: 'Operator Brand' }],
            properties: [{ type: 'website', identifier: 'News.Example', relationship: 'delegated' }],
            agents: [{ type: 'sales', url: 'https://sales.example.com/mcp' }],
          },
        ],
      };
      const diff = await db().transaction((tx) => upsertOperatorFromBrandJson(tx, 'operator.example', brand, { valid: true, now }));
      expect(diff.created).toBe(true);
      expect(diff.properties.added).toEqual([{ property_type: 'website', identifier: 'news.example', relationship: 'delegated', brand_id: 'op' }]);
      expect(diff.agents.added).toEqual(['https://sales.example.com/mcp']);
      const again = await db().transaction((tx) => upsertOperatorFromBrandJson(tx, 'operator.example', brand, { valid: true, now }));
      expect(again.properties).toEqual({ added: [], removed: [], changed: [] });
    });
  },
);
