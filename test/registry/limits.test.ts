import { defaultIds } from '../../core/ports/ids.ts';
import { expect, test } from 'bun:test';
import auth from '../../plugins/auth/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import { Database } from '../../core/ports/database.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import { createApiKey } from '../../plugins/auth/store.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';

forEachDatabase(
  'registry write and bulk limits',
  // Organization caps raised here: this suite measures the per-caller limits.
  (adapter, schema) =>
    startServer(adapter, schema, [auth(), registryBrands(), rateLimit({ pruneIntervalMs: 0 }), restHost()], {
      env: { ORG_SAVES_PER_HOUR: '1000', ORG_SAVES_PER_DAY: '1000' },
    }),
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
      expect((await s().fetch('/api/brands/resolve?domain=limited-61.example')).status).toBe(404); // nothing written
      const other = await newKey(s().deployment);
      expect((await s().fetch('/api/brands/save', { method: 'POST', token: other.key, json: { domain: 'limited-61.example', brand_name: 'L' } })).status).toBe(
        200,
      );
    });
  },
);

forEachAdapter('per-organization save caps', (adapter) => {
  test(`hourly and daily caps per organization, counted across instances, brands and properties together [${adapter}]`, async () => {
    const clock = new ManualClock(new Date('2026-03-02T10:00:00Z'));
    const env = { ORG_SAVES_PER_HOUR: '3', ORG_SAVES_PER_DAY: '5' };
    const plugins = () => [auth(), registryBrands(), registryProperties(), rateLimit({ pruneIntervalMs: 0 }), restHost()];
    const a = await deploy(adapter, plugins(), { serve: true, clock, env });
    const b = await deploy(adapter, plugins(), { serve: true, clock, env, schema: a.schema! });
    try {
      const { key, orgId } = await newKey(a.deployment);
      // A second key of the same organization, used on the other instance.
      const second = (await createApiKey(a.deployment.get(Database), defaultIds, { orgId, name: 'second' })).key;
      const post = (base: string, path: string, token: string, json: unknown) =>
        fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(json) });
      const brand = (base: string, token: string, i: number) => post(base, '/api/brands/save', token, { domain: `cap-${i}.example`, brand_name: 'Cap' });
      const property = (base: string, token: string, i: number) =>
        post(base, '/api/properties/save', token, { publisher_domain: `cap-pub-${i}.example`, authorized_agents: [] });

      expect((await brand(a.base!, key, 1)).status).toBe(200);
      expect((await property(b.base!, second, 2)).status).toBe(200);
      expect((await brand(b.base!, second, 3)).status).toBe(200);
      const refused = await property(a.base!, key, 4);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('3600');
      expect(await refused.json()).toMatchObject({ error: 'rate_limited', retry_after: 3600 });
      expect((await fetch(`${a.base}/api/properties/resolve?domain=cap-pub-4.example`)).status).toBe(404);
      // Another organization is not affected.
      const other = await newKey(b.deployment);
      expect((await brand(b.base!, other.key, 5)).status).toBe(200);

      // Next hour: two more fit under the daily cap of 5, then the day is full.
      clock.advance(3600_000);
      expect((await brand(a.base!, key, 6)).status).toBe(200);
      expect((await brand(b.base!, second, 7)).status).toBe(200);
      const daily = await brand(a.base!, key, 8);
      expect(daily.status).toBe(429);
      expect(Number(daily.headers.get('retry-after'))).toBe(13 * 3600);
    } finally {
      await b.close();
      await a.close();
    }
  });
});
