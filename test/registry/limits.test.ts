import { expect, test } from 'bun:test';
import auth from '../../plugins/auth/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';

forEachDatabase(
  'registry write and bulk limits',
  (adapter, schema) => startServer(adapter, schema, [auth(), registryBrands(), rateLimit({ pruneIntervalMs: 0 }), restHost()]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();

    test('bulk resolve: 20 per minute per IP, then 429 with Retry-After', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++) {
        statuses.push((await s().fetch('/api/brands/resolve/bulk', { method: 'POST', json: { domains: ['limit.example'] } })).status);
      }
      expect(statuses.slice(0, 20).every((x) => x === 200)).toBe(true);
      const refused = await s().fetch('/api/brands/resolve/bulk', { method: 'POST', json: { domains: ['limit.example'] } });
      expect(refused.status).toBe(429);
      const body = (await refused.json()) as any;
      expect(body.error).toBe('rate_limited');
      expect(body.retry_after).toBeGreaterThan(0);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    test('saves: 60 per hour per caller; another caller is unaffected', async () => {
      const { key } = await newKey(s().deployment);
      for (let i = 0; i < 60; i++) {
        const res = await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: `limited-${i}.example`, brand_name: 'L' } });
        expect(res.status).toBe(200);
      }
      const refused = await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'limited-61.example', brand_name: 'L' } });
      expect(refused.status).toBe(429);
      expect(((await s().fetch('/api/brands/resolve?domain=limited-61.example')).status)).toBe(404); // nothing written
      const other = await newKey(s().deployment);
      expect((await s().fetch('/api/brands/save', { method: 'POST', token: other.key, json: { domain: 'limited-61.example', brand_name: 'L' } })).status).toBe(200);
    });
  },
);
