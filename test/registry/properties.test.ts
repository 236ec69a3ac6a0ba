import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { Ids } from '../../core/ports/ids.ts';
import auth from '../../plugins/auth/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { recordAdagentsJson } from '../../plugins/registry-properties/authoritative.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

const hosted = (domain: string, extra: Record<string, unknown> = {}) => ({
  publisher_domain: domain,
  authorized_agents: [{ url: 'https://sales.agent.example/mcp', authorized_for: 'All display inventory' }],
  properties: [
    { type: 'website', name: 'Main site', identifiers: [{ type: 'domain', value: domain }], tags: ['news'] },
    { type: 'mobile_app', name: 'Main app', identifiers: [{ type: 'ios_bundle', value: 'com.example.app' }] },
  ],
  contact: { name: 'Ops', email: 'ops@example.com' },
  ...extra,
});

forEachDatabase(
  'hosted properties over HTTP',
  (adapter, schema) => startServer(adapter, schema, [auth(), rateLimit(), registryProperties(), restHost()]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();

    test('save -> resolve -> update -> history -> rollback round trip keeps property ids stable', async () => {
      const { key } = await newKey(s().deployment);
      const created = await s().fetch('/api/properties/save', { method: 'POST', token: key, json: hosted('Pub-Roundtrip.example') });
      expect(created.status).toBe(200);
      const c = await created.json();
      expect(c).toMatchObject({ success: true });
      expect(c.revision_number).toBeUndefined();

      const first = await (await s().fetch('/api/properties/resolve?domain=pub-roundtrip.example')).json();
      expect(first).toMatchObject({
        publisher_domain: 'pub-roundtrip.example',
        source: 'hosted',
        verified: false,
        contact: { name: 'Ops', email: 'ops@example.com' },
      });
      expect(first.authorized_agents).toEqual([{ url: 'https://sales.agent.example/mcp', authorized_for: 'All display inventory' }]);
      expect(first.properties.map((p: any) => p.id)).toEqual(['website_main_site', 'mobile_app_main_app']);

      const body = hosted('pub-roundtrip.example', {
        properties: [{ type: 'website', name: 'Main site', identifiers: [{ type: 'domain', value: 'pub-roundtrip.example' }], tags: ['news', 'sports'] }],
      });
      const updated = await (await s().fetch('/api/properties/save', { method: 'POST', token: key, json: body })).json();
      expect(updated.revision_number).toBe(2);
      const second = await (await s().fetch('/api/properties/resolve?domain=pub-roundtrip.example')).json();
      expect(second.properties).toHaveLength(1);
      expect(second.properties[0].tags).toEqual(['news', 'sports']);

      const rolled = await (await s().fetch('/api/properties/pub-roundtrip.example/rollback', { method: 'POST', token: key, json: { to_revision: 1 } })).json();
      expect(rolled).toMatchObject({ revision_number: 3, rolled_back_to: 1 });
      const third = await (await s().fetch('/api/properties/resolve?domain=pub-roundtrip.example')).json();
      expect(third.properties).toEqual(first.properties);
      const history = await (await s().fetch('/api/properties/history?domain=pub-roundtrip.example')).json();
      expect(history.revisions.map((r: any) => [r.revision_number, r.is_rollback, r.rolled_back_to ?? null, r.source])).toEqual([
        [3, true, 1, 'hosted'],
        [2, false, null, 'hosted'],
        [1, false, null, 'hosted'],
      ]);
    });

    test('concurrent saves of one publisher produce consecutive revisions', async () => {
      const { key } = await newKey(s().deployment);
      const n = 20;
      await Promise.all(Array.from({ length: n }, () => s().fetch('/api/properties/save', { method: 'POST', token: key, json: hosted('busy-pub.example') })));
      const history = await (await s().fetch('/api/properties/history?domain=busy-pub.example&limit=100')).json();
      expect(history.revisions.map((r: any) => r.revision_number)).toEqual(Array.from({ length: n }, (_, i) => n - i));
    });

    test('an adagents.json-managed publisher answers 409 to saves and resolves as verified', async () => {
      const deployment = s().deployment;
      const db = deployment.get(Database);
      const events = await db.transaction((tx) =>
        recordAdagentsJson(
          tx,
          'managed-pub.example',
          {
            authorized_agents: [{ url: 'https://agent.example', authorized_for: 'all' }],
            properties: [{ property_type: 'website', name: 'Managed', identifiers: [{ type: 'domain', value: 'managed-pub.example' }] }],
          },
          { newId: deployment.get(Ids).uuid7, now: new Date(), actor: 'crawler' },
        ),
      );
      expect(events.map((e) => e.event_type)).toEqual(['property.created']);
      expect(Object.keys(events[0]!.payload).sort()).toEqual(['classification', 'identifiers', 'property_rid', 'source']);
      const { key } = await newKey(deployment);
      expect((await s().fetch('/api/properties/save', { method: 'POST', token: key, json: hosted('managed-pub.example') })).status).toBe(409);
      const resolved = await (await s().fetch('/api/properties/resolve?domain=managed-pub.example')).json();
      expect(resolved).toMatchObject({ source: 'adagents_json', verified: true });
      const listed = await (await s().fetch('/api/properties/registry?source=adagents_json')).json();
      expect(listed.properties.map((p: any) => p.publisher_domain)).toContain('managed-pub.example');
    });

    test('bad input is 400 with the field named; nothing is written', async () => {
      const { key } = await newKey(s().deployment);
      const db = s().deployment.get(Database);
      const [before] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM property_revisions`);
      const cases: Array<[unknown, RegExp]> = [
        [{ authorized_agents: [] }, /body\.publisher_domain: is required/],
        [{ publisher_domain: 'p.example' }, /body\.authorized_agents: is required/],
        [{ publisher_domain: 'p.example', authorized_agents: [{}] }, /body\.authorized_agents\[0\]\.url: is required/],
        [{ publisher_domain: 'p.example', authorized_agents: [{ url: 'http://plain.example' }] }, /https/],
        [{ publisher_domain: 'p.example', authorized_agents: [], properties: [{ type: 'billboard', name: 'x' }] }, /body\.properties\[0\]\.type/],
        [{ publisher_domain: 'p.example', authorized_agents: [], properties: [{ type: 'website' }] }, /body\.properties\[0\]\.name: is required/],
        [{ publisher_domain: 'p.example', authorized_agents: [], contact: { email: 'not-an-email' } }, /body\.contact\.email/],
        [{ publisher_domain: 'a..b', authorized_agents: [] }, /body\.publisher_domain: invalid domain/],
      ];
      for (const [json, message] of cases) {
        const res = await s().fetch('/api/properties/save', { method: 'POST', token: key, json });
        expect(res.status).toBe(400);
        expect((await res.json()).message).toMatch(message);
      }
      const [after] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM property_revisions`);
      expect(after!.n).toBe(before!.n);
      expect((await s().fetch('/api/properties/resolve/bulk', { method: 'POST', json: { domains: Array(101).fill('x.example') } })).status).toBe(400);
    });
  },
);
