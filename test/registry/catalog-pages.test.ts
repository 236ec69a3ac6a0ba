import { expect, test } from 'bun:test';
import auth from '../../plugins/auth/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

forEachDatabase(
  'agent catalog pages and ETags',
  (adapter, schema) => startServer(adapter, schema, [auth(), rateLimit(), registryBrands(), searchPostgres(), registryAgents(), restHost()]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();

    test('cursor pages cover every agent once (ties on name included); the first page keeps its shape', async () => {
      const { key } = await newKey(s().deployment);
      // Three agents share a name: the url breaks the tie.
      const names = ['Delta', 'Alpha', 'Same', 'Same', 'Same', 'Bravo', 'Charlie'];
      for (const [i, name] of names.entries()) {
        const res = await s().fetch('/api/registry/agents', {
          method: 'POST',
          token: key,
          json: { url: `https://agent-${i}.pages.example/mcp`, name, type: 'sales' },
        });
        expect(res.status).toBe(201);
      }
      const all = await (await s().fetch('/api/registry/agents')).json();
      expect(all).toMatchObject({ count: 7, has_more: false, cursor: null });
      expect(all.agents.map((a: any) => a.name)).toEqual(['Alpha', 'Bravo', 'Charlie', 'Delta', 'Same', 'Same', 'Same']);

      const seen: string[] = [];
      let cursor: string | null = null;
      const sizes: number[] = [];
      do {
        const page: any = await (await s().fetch(`/api/registry/agents?limit=3${cursor ? `&cursor=${cursor}` : ''}`)).json();
        sizes.push(page.count);
        seen.push(...page.agents.map((a: any) => a.url));
        cursor = page.has_more ? page.cursor : null;
      } while (cursor);
      expect(sizes).toEqual([3, 3, 1]);
      expect(seen).toEqual(all.agents.map((a: any) => a.url));

      for (const bad of ['limit=0', 'limit=501', 'limit=-1', 'cursor=not-a-cursor']) {
        const res = await s().fetch(`/api/registry/agents?${bad}`);
        expect(res.status).toBe(400);
      }
    });

    test('ETag / If-None-Match on the catalog and on resolves', async () => {
      const first = await s().fetch('/api/registry/agents');
      const tag = first.headers.get('etag')!;
      expect(tag).toMatch(/^"[0-9a-z-]+"$/);
      expect(first.headers.get('vary')).toBe('Authorization');
      const again = await s().fetch('/api/registry/agents', { headers: { 'if-none-match': tag } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('etag')).toBe(tag);

      const { key } = await newKey(s().deployment);
      await s().fetch('/api/registry/agents', { method: 'POST', token: key, json: { url: 'https://new.pages.example/mcp', name: 'Echo', type: 'sales' } });
      const changed = await s().fetch('/api/registry/agents', { headers: { 'if-none-match': tag } });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).not.toBe(tag);

      await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'etag.example', brand_name: 'E' } });
      const resolved = await s().fetch('/api/brands/resolve?domain=etag.example');
      const brandTag = resolved.headers.get('etag')!;
      expect((await s().fetch('/api/brands/resolve?domain=etag.example', { headers: { 'if-none-match': `W/${brandTag}, "other"` } })).status).toBe(304);
      await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'etag.example', brand_name: 'E2' } });
      const after = await s().fetch('/api/brands/resolve?domain=etag.example', { headers: { 'if-none-match': brandTag } });
      expect(after.status).toBe(200);
      expect((await after.json()).brand_name).toBe('E2');
    });
  },
);
