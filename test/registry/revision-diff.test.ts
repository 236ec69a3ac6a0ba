import { describe, expect, test } from 'bun:test';
import auth from '../../plugins/auth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { diffFields } from '../../lib/revisioned/diff.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';

describe('diffFields', () => {
  test('leaves by path: changed, added, removed; emptied containers show', () => {
    expect(
      diffFields(
        { name: 'A', tags: ['x', 'y'], nested: { keep: 1, drop: true }, list: [1], 'odd key': 1 },
        { name: 'B', tags: ['x'], nested: { keep: 1, add: null }, list: [], 'odd key': 2 },
      ),
    ).toEqual([
      { path: 'name', change: 'changed', before: 'A', after: 'B' },
      { path: 'nested.add', change: 'added', after: null },
      { path: 'list', change: 'added', after: [] },
      { path: '["odd key"]', change: 'changed', before: 1, after: 2 },
      { path: 'tags[1]', change: 'removed', before: 'y' },
      { path: 'nested.drop', change: 'removed', before: true },
      { path: 'list[0]', change: 'removed', before: 1 },
    ]);
    expect(diffFields({ a: 1 }, { a: 1 })).toEqual([]);
    expect(diffFields(undefined, { a: { b: 'c' } })).toEqual([{ path: 'a.b', change: 'added', after: 'c' }]);
  });
});

forEachDatabase(
  'revision diffs and recent changes over HTTP',
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
    ]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();

    test('GET /api/brands/diff and /api/properties/diff: field by field between revisions; bad input is 4xx', async () => {
      const { key } = await newKey(s().deployment, 'member', 'Dana Editor');
      const post = (path: string, json: unknown) => s().fetch(path, { method: 'POST', token: key, json });
      expect((await post('/api/brands/save', { domain: 'diff.example', brand_name: 'Diff', brand_manifest: { colors: [{ hex: '#111111' }] } })).status).toBe(
        200,
      );
      expect(
        (
          await post('/api/brands/save', {
            domain: 'diff.example',
            brand_name: 'Diff 2',
            brand_manifest: { colors: [{ hex: '#222222' }] },
            edit_summary: 'Two',
          })
        ).status,
      ).toBe(200);
      const diff = async (query: string) => {
        const res = await s().fetch(`/api/brands/diff?${query}`);
        return { status: res.status, body: (await res.json()) as any };
      };
      const latest = await diff('domain=diff.example');
      expect(latest.status).toBe(200);
      expect(latest.body).toMatchObject({ domain: 'diff.example', from: 1, to: 2, total_changes: 2, truncated: false });
      expect(latest.body.to_revision).toMatchObject({ revision_number: 2, edit_summary: 'Two', editor_name: 'Dana Editor' });
      expect(latest.body.changes).toEqual([
        { path: 'brand_name', change: 'changed', before: 'Diff', after: 'Diff 2' },
        { path: 'brand_manifest.colors[0].hex', change: 'changed', before: '#111111', after: '#222222' },
      ]);
      const first = await diff('domain=diff.example&to=1');
      expect(first.body.from).toBe(0);
      expect(first.body.from_revision).toBeNull();
      expect(first.body.changes.every((c: any) => c.change === 'added')).toBe(true);
      const backwards = await diff('domain=diff.example&from=2&to=1');
      expect(backwards.body.changes[0]).toEqual({ path: 'brand_name', change: 'changed', before: 'Diff 2', after: 'Diff' });
      expect((await diff('domain=diff.example&to=9')).status).toBe(404);
      expect((await diff('domain=nothing.example')).status).toBe(404);
      for (const bad of ['domain=diff.example&to=0', 'domain=diff.example&to=x', 'domain=diff.example&from=-1', 'domain=%00', 'to=1'])
        expect((await diff(bad)).status).toBe(400);

      await post('/api/properties/save', {
        publisher_domain: 'diff-pub.example',
        authorized_agents: [],
        properties: [{ type: 'website', name: 'One', identifiers: [{ type: 'domain', value: 'diff-pub.example' }] }],
      });
      await post('/api/properties/save', {
        publisher_domain: 'diff-pub.example',
        authorized_agents: [{ url: 'https://agent.example/mcp' }],
        properties: [{ type: 'website', name: 'One renamed', identifiers: [{ type: 'domain', value: 'diff-pub.example' }] }],
      });
      const props = (await (await s().fetch('/api/properties/diff?domain=diff-pub.example')).json()) as any;
      expect(props.changes.map((c: any) => `${c.change} ${c.path}`)).toContain('changed properties[0].name');
      expect(props.changes.map((c: any) => `${c.change} ${c.path}`)).toContain('added authorized_agents[0].url');
    });

    test('GET /api/registry/feed/recent: newest first, at most 20, a credential required, each reader sees what the feed shows them', async () => {
      const { key } = await newKey(s().deployment, 'member', 'Dana Editor');
      for (const n of [1, 2, 3])
        await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: `recent-${n}.example`, brand_name: `Recent ${n}` } });
      expect((await s().fetch('/api/registry/feed/recent?limit=2')).status).toBe(401);
      const { key: other } = await newKey(s().deployment, 'member', 'Other Org');
      const res = await s().fetch('/api/registry/feed/recent?limit=2', { token: key });
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body.events.map((e: any) => e.payload.domain)).toEqual(['recent-3.example', 'recent-2.example']);
      expect((await s().fetch('/api/registry/feed/recent?limit=21', { token: key })).status).toBe(400);
      // A private agent's event: its organization sees it, another member does not.
      const enrolled = await s().fetch('/api/registry/agents', {
        method: 'POST',
        token: key,
        json: { url: 'https://private-one.example/mcp', name: 'Private one', type: 'sales', visibility: 'private' },
      });
      expect(enrolled.status).toBe(201);
      const newest = async (token: string) => ((await (await s().fetch('/api/registry/feed/recent?limit=1', { token })).json()) as any).events[0];
      expect((await newest(key)).payload.agent_url).toBe('https://private-one.example/mcp');
      expect((await newest(other)).payload.domain).toBe('recent-3.example');
      expect((await s().fetch('/api/registry/feed')).status).toBe(401);
    });
  },
);
