import { afterAll, beforeAll, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { Ids } from '../../core/ports/ids.ts';
import auth from '../../plugins/auth/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { recordBrandJson } from '../../plugins/registry-brands/authoritative.ts';
import { describePostgres, dropSchema, forEachDatabase, uniqueSchema } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

forEachDatabase(
  'brands over HTTP',
  (adapter, schema) => startServer(adapter, schema, [auth(), rateLimit(), registryBrands(), restHost()]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();
    const count = async (table: string) =>
      (
        await s()
          .deployment.get(Database)
          .query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(table)}`)
      )[0]!.n;

    test('save -> resolve -> history -> rollback round trip', async () => {
      const { key } = await newKey(s().deployment, 'member', 'Dana Editor');
      const created = await s().fetch('/api/brands/save', {
        method: 'POST',
        token: key,
        json: {
          domain: 'HTTPS://Acme-Roundtrip.example/about',
          brand_name: 'Acme',
          brand_manifest: { name: 'Acme', colors: [{ hex: '#FF0000', type: 'primary' }] },
        },
      });
      expect(created.status).toBe(200);
      const c = await created.json();
      expect(c).toMatchObject({ success: true, domain: 'acme-roundtrip.example' });
      expect(c.revision_number).toBeUndefined();
      expect(typeof c.id).toBe('string');

      const updated = await (
        await s().fetch('/api/brands/save', {
          method: 'POST',
          token: key,
          json: { domain: 'acme-roundtrip.example', brand_name: 'Acme Corp', edit_summary: 'Renamed' },
        })
      ).json();
      expect(updated).toMatchObject({ success: true, id: c.id, revision_number: 2 });

      const resolved = await (await s().fetch('/api/brands/resolve?domain=acme-roundtrip.example')).json();
      expect(resolved).toMatchObject({
        canonical_id: 'acme-roundtrip.example',
        canonical_domain: 'acme-roundtrip.example',
        brand_name: 'Acme Corp',
        source: 'community',
        keller_type: 'master',
      });
      expect(resolved.brand_manifest).toBeUndefined();

      const rolled = await s().fetch('/api/brands/acme-roundtrip.example/rollback', { method: 'POST', token: key, json: { to_revision: 1 } });
      expect(rolled.status).toBe(200);
      expect(await rolled.json()).toMatchObject({ revision_number: 3, rolled_back_to: 1 });
      const after = await (await s().fetch('/api/brands/resolve?domain=acme-roundtrip.example')).json();
      expect(after.brand_name).toBe('Acme');
      expect(after.brand_manifest.colors[0].hex).toBe('#FF0000');

      const history = await (await s().fetch('/api/brands/history?domain=acme-roundtrip.example')).json();
      expect(history.domain).toBe('acme-roundtrip.example');
      expect(history.total).toBe(3);
      expect(history.revisions.map((r: any) => r.revision_number)).toEqual([3, 2, 1]);
      const [r3, r2, r1] = history.revisions;
      expect(r3).toMatchObject({ is_rollback: true, rolled_back_to: 1, source: 'community', editor_name: 'Dana Editor' });
      expect(r2).toMatchObject({ is_rollback: false, edit_summary: 'Renamed' });
      expect(r2.rolled_back_to).toBeUndefined();
      expect(Object.keys(r1).sort()).toEqual(['created_at', 'edit_summary', 'editor_name', 'is_rollback', 'revision_number', 'source']);
      expect(new Date(r1.created_at).toISOString()).toBe(r1.created_at);

      const page = await (await s().fetch('/api/brands/history?domain=acme-roundtrip.example&limit=1&offset=1')).json();
      expect(page.revisions.map((r: any) => r.revision_number)).toEqual([2]);
      expect(page.total).toBe(3);
    });

    test('20+ concurrent saves of one domain produce consecutive revisions, none lost', async () => {
      const { key } = await newKey(s().deployment);
      const n = 24;
      const responses = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          s()
            .fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'concurrent.example', brand_name: `Name ${i}` } })
            .then((r) => r.json()),
        ),
      );
      expect(responses.every((r: any) => r.success === true)).toBe(true);
      expect(responses.filter((r: any) => r.revision_number === undefined)).toHaveLength(1);
      const history = await (await s().fetch('/api/brands/history?domain=concurrent.example&limit=100')).json();
      expect(history.total).toBe(n);
      expect(history.revisions.map((r: any) => r.revision_number)).toEqual(Array.from({ length: n }, (_, i) => n - i));
      const numbers = responses.map((r: any) => r.revision_number ?? 1).sort((a: number, b: number) => a - b);
      expect(numbers).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    });

    test('auth: 401 without or with a bad key, 403 for public tier and for another org, admin may edit', async () => {
      const body = { domain: 'owned.example', brand_name: 'Owned' };
      expect((await s().fetch('/api/brands/save', { method: 'POST', json: body })).status).toBe(401);
      const bad = await s().fetch('/api/brands/save', { method: 'POST', json: body, token: 'proto_not-a-real-key' });
      expect(bad.status).toBe(401);
      expect((await bad.json()).error).toBe('auth_required');
      const pub = await newKey(s().deployment, 'public');
      expect((await s().fetch('/api/brands/save', { method: 'POST', json: body, token: pub.key })).status).toBe(403);

      const owner = await newKey(s().deployment);
      expect((await s().fetch('/api/brands/save', { method: 'POST', json: body, token: owner.key })).status).toBe(200);
      const other = await newKey(s().deployment);
      const denied = await s().fetch('/api/brands/save', { method: 'POST', json: { ...body, brand_name: 'Hijack' }, token: other.key });
      expect(denied.status).toBe(403);
      expect((await s().fetch('/api/brands/owned.example/rollback', { method: 'POST', json: { to_revision: 1 }, token: other.key })).status).toBe(403);
      const admin = await newKey(s().deployment, 'admin');
      expect((await s().fetch('/api/brands/save', { method: 'POST', json: { ...body, brand_name: 'Moderated' }, token: admin.key })).status).toBe(200);
      const history = await (await s().fetch('/api/brands/history?domain=owned.example')).json();
      expect(history.total).toBe(2);
    });

    test('authoritative brand.json entry: save and rollback answer 409; brand-json serves the document', async () => {
      const db = s().deployment.get(Database);
      const ids = s().deployment.get(Ids);
      const doc = {
        house: { domain: 'authoritative.example', name: 'Auth House' },
        brands: [{ id: 'auth', names: [{ en: 'Auth Brand' }], keller_type: 'master', domains: ['authoritative.example'] }],
      };
      await db.transaction((tx) => recordBrandJson(tx, 'authoritative.example', doc, { newId: ids.uuid7, now: new Date() }));
      const { key } = await newKey(s().deployment);
      const res = await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'authoritative.example', brand_name: 'Mine now' } });
      expect(res.status).toBe(409);
      expect((await res.json()).error).toBe('conflict');
      const resolved = await (await s().fetch('/api/brands/resolve?domain=authoritative.example')).json();
      expect(resolved).toMatchObject({ brand_name: 'Auth Brand', source: 'brand_json' });
      const raw = await (await s().fetch('/api/brands/brand-json?domain=authoritative.example')).json();
      expect(raw.data).toEqual(doc);
      expect((await s().fetch('/api/brands/brand-json?domain=unknown-brand.example')).status).toBe(404);
    });

    test('bad input gets 400 naming the problem and writes nothing', async () => {
      const { key } = await newKey(s().deployment);
      const before = [await count('brands'), await count('brand_revisions')];
      const cases: Array<[unknown, RegExp]> = [
        [{}, /body\.domain: is required/],
        [{ domain: 'missing-name.example' }, /body\.brand_name: is required/],
        [{ domain: 42, brand_name: 'x' }, /body\.domain: must be a string/],
        [{ domain: 'ok.example', brand_name: 7 }, /body\.brand_name/],
        [{ domain: 'http://', brand_name: 'x' }, /body\.domain: invalid domain: is empty/],
        [{ domain: 'a..b', brand_name: 'x' }, /body\.domain: invalid domain/],
        [{ domain: `${'a'.repeat(300)}.com`, brand_name: 'x' }, /body\.domain: invalid domain/],
        [{ domain: 'evil\u202Egoogle.com', brand_name: 'x' }, /bidirectional/],
        [{ domain: 'bad\u0007bell.com', brand_name: 'x' }, /control characters/],
        [{ domain: 'pаypal.com', brand_name: 'x' }, /mixes writing scripts/],
        [{ domain: 'ok.example', brand_name: 'x', brand_manifest: { colors: [{ hex: 'red' }] } }, /body\.brand_manifest\.colors\[0\]\.hex/],
        [{ domain: 'ok.example', brand_name: 'x', brand_manifest: 'nope' }, /body\.brand_manifest/],
        [{ domain: 'ok.example', brand_name: 'x', keller_type: 'galaxy' }, /body\.keller_type/],
      ];
      for (const [json, message] of cases) {
        const res = await s().fetch('/api/brands/save', { method: 'POST', token: key, json });
        expect(res.status).toBe(400);
        const body = await res.json();
        expect(body.error).toBe('invalid_request');
        expect(body.message).toMatch(message);
      }
      const malformed = await s().fetch('/api/brands/save', {
        method: 'POST',
        token: key,
        body: '{"domain":',
        headers: { 'content-type': 'application/json' },
      });
      expect(malformed.status).toBe(400);
      expect((await malformed.json()).message).toMatch(/malformed JSON/);
      const wrongType = await s().fetch('/api/brands/save', {
        method: 'POST',
        token: key,
        body: 'domain=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(wrongType.status).toBe(415);

      const bulk = await s().fetch('/api/brands/resolve/bulk', { method: 'POST', json: { domains: Array.from({ length: 101 }, (_, i) => `d${i}.example`) } });
      expect(bulk.status).toBe(400);
      expect((await bulk.json()).message).toMatch(/body\.domains: accepts at most 100 domains/);
      const badInBulk = await s().fetch('/api/brands/resolve/bulk', { method: 'POST', json: { domains: ['fine.example', 'a..b'] } });
      expect(badInBulk.status).toBe(400);
      expect((await badInBulk.json()).message).toMatch(/body\.domains\[1\]/);
      for (const q of ['', '?domain=', '?domain=a..b', '?domain=http://']) {
        expect((await s().fetch(`/api/brands/resolve${q}`)).status).toBe(400);
      }
      for (const q of ['limit=0', 'limit=101', 'limit=abc', 'offset=-1']) {
        const res = await s().fetch(`/api/brands/history?domain=x.example&${q}`);
        expect(res.status).toBe(400);
        expect((await res.json()).message).toMatch(/query\.(limit|offset)/);
      }
      expect((await s().fetch('/api/brands/x.example/rollback', { method: 'POST', token: key, json: { to_revision: 'one' } })).status).toBe(400);
      expect([await count('brands'), await count('brand_revisions')]).toEqual(before);
    });

    test('bulk resolve maps unknown domains to null; registry lists with search, source and paging', async () => {
      const { key } = await newKey(s().deployment);
      for (const d of ['listed-one.example', 'listed-two.example', 'other-thing.example']) {
        await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: d, brand_name: `Brand ${d}` } });
      }
      const bulk = await (
        await s().fetch('/api/brands/resolve/bulk', { method: 'POST', json: { domains: ['Listed-One.example', 'nothing-here.example'] } })
      ).json();
      expect(bulk.results['Listed-One.example'].canonical_domain).toBe('listed-one.example');
      expect(bulk.results['nothing-here.example']).toBeNull();

      const listed = await (await s().fetch('/api/brands/registry?search=listed-&limit=1')).json();
      expect(listed.total).toBe(2);
      expect(listed.brands).toHaveLength(1);
      expect(listed.brands[0]).toMatchObject({ domain: 'listed-one.example', source: 'community', has_manifest: false, verified: false });
      const second = await (await s().fetch('/api/brands/registry?search=listed-&limit=1&offset=1')).json();
      expect(second.brands[0].domain).toBe('listed-two.example');
      const wildcard = await (await s().fetch('/api/brands/registry?search=%25')).json();
      expect(wildcard.total).toBe(0);
      expect((await s().fetch('/api/brands/registry?source=bogus')).status).toBe(400);
      const legacy = await s().fetch('/api/brands/discovered/community', {
        method: 'POST',
        token: key,
        json: { domain: 'legacy.example', brand_name: 'Legacy' },
      });
      expect(legacy.status).toBe(200);
      expect(legacy.headers.get('deprecation')).toBe('true');
    });

    test('rollback to an unknown revision is 404 and to the current one 409', async () => {
      const { key } = await newKey(s().deployment);
      await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'rb.example', brand_name: 'One' } });
      expect((await s().fetch('/api/brands/rb.example/rollback', { method: 'POST', token: key, json: { to_revision: 9 } })).status).toBe(404);
      expect((await s().fetch('/api/brands/rb.example/rollback', { method: 'POST', token: key, json: { to_revision: 1 } })).status).toBe(409);
      expect((await s().fetch('/api/brands/nobody.example/rollback', { method: 'POST', token: key, json: { to_revision: 1 } })).status).toBe(404);
    });
  },
);

describePostgres('brand resolve cache across two instances on one Postgres', () => {
  const schema = uniqueSchema('brandcache');
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    a = await startServer('postgres', schema, [auth(), rateLimit(), registryBrands(), restHost()]);
    b = await startServer('postgres', schema, [auth(), rateLimit(), registryBrands(), restHost()]);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await dropSchema('postgres', schema);
  });

  test('a save on one instance invalidates the cached resolution on the other', async () => {
    const { key } = await newKey(a.deployment);
    expect((await b.fetch('/api/brands/resolve?domain=cached.example')).status).toBe(404); // cached miss on B
    await a.fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'cached.example', brand_name: 'First' } });
    expect((await a.fetch('/api/brands/resolve?domain=cached.example')).status).toBe(200); // read-your-writes on A
    let seen = 404;
    for (let i = 0; i < 100 && seen !== 200; i++) {
      seen = (await b.fetch('/api/brands/resolve?domain=cached.example')).status;
      if (seen !== 200) await Bun.sleep(20);
    }
    expect(seen).toBe(200);
    await a.fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'cached.example', brand_name: 'Second' } });
    let name = '';
    for (let i = 0; i < 100 && name !== 'Second'; i++) {
      name = (await (await b.fetch('/api/brands/resolve?domain=cached.example')).json()).brand_name;
      if (name !== 'Second') await Bun.sleep(20);
    }
    expect(name).toBe('Second');
  });
});
