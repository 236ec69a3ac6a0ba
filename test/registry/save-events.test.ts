import { expect, test } from 'bun:test';
import auth from '../../plugins/auth/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

forEachDatabase(
  'save events in the change feed',
  (adapter, schema) =>
    startServer(adapter, schema, [
      auth(),
      rateLimit(),
      registryBrands(),
      registryProperties(),
      registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }),
      restHost(),
    ]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();

    test('brand and property saves and rollbacks emit their events; refused saves emit none', async () => {
      const { key } = await newKey(s().deployment);
      const feed = async (cursor?: string) =>
        (await (await s().fetch(`/api/registry/feed?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token: key })).json()) as any;
      const start = (await feed()).cursor as string | undefined;

      await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'evented.example', brand_name: 'One' } });
      await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'evented.example', brand_name: 'Two' } });
      await s().fetch('/api/brands/evented.example/rollback', { method: 'POST', token: key, json: { to_revision: 1 } });
      await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'a..b', brand_name: 'Bad' } });
      const other = await newKey(s().deployment);
      expect((await s().fetch('/api/brands/save', { method: 'POST', token: other.key, json: { domain: 'evented.example', brand_name: 'Nope' } })).status).toBe(
        403,
      );
      const body = {
        publisher_domain: 'evented-pub.example',
        authorized_agents: [{ url: 'https://agent.example/mcp' }],
        properties: [{ type: 'website', name: 'Site', identifiers: [{ type: 'domain', value: 'evented-pub.example' }] }],
      };
      await s().fetch('/api/properties/save', { method: 'POST', token: key, json: body });
      await s().fetch('/api/properties/save', { method: 'POST', token: key, json: { ...body, properties: [{ ...body.properties[0], tags: ['sports'] }] } });

      const { events } = await feed(start);
      expect(events.map((e: any) => e.event_type)).toEqual(['brand.created', 'brand.updated', 'brand.updated', 'property.created', 'property.updated']);
      expect(events.map((e: any) => e.payload.revision_number).slice(0, 3)).toEqual([1, 2, 3]);
      const created = events[3];
      expect(created.payload).toEqual({
        property_rid: created.entity_id,
        classification: 'website',
        source: 'hosted',
        identifiers: [{ type: 'domain', value: 'evented-pub.example' }],
      });
      expect(events[4].entity_id).toBe(created.entity_id); // the property keeps its id across revisions
    });
  },
);
