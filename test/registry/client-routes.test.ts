import { expect, test } from 'bun:test';
import auth from '../../plugins/auth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryPolicies from '../../plugins/registry-policies/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';

/**
 * Routes the official client (@adcp/sdk RegistryClient) calls, with the paths, parameters and
 * answer members it reads: findCompany, checkPropertyList / getPropertyCheckReport and the policy
 * registry (listPolicies, resolvePolicy, resolvePoliciesBulk, getPolicyHistory, savePolicy).
 */
forEachDatabase(
  'registry routes of the official client',
  (adapter, schema) =>
    startServer(adapter, schema, [auth(), rateLimit({ pruneIntervalMs: 0 }), registryBrands(), registryProperties(), registryPolicies(), restHost()]),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();

    test('findCompany: GET /api/brands/find?q=&limit= answers results, exact matches first; a short query is 400', async () => {
      const { key } = await newKey(s().deployment);
      for (const [domain, brand_name] of [
        ['acmewidgets.example', 'Widgets by Acme'],
        ['acme.example', 'Acme'],
        ['other.example', 'Acme Holdings Subsidiary'],
        ['unrelated.example', 'Nothing Here'],
      ])
        expect((await s().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain, brand_name } })).status).toBe(200);
      const found = await (await s().fetch('/api/brands/find?q=acme')).json();
      expect(found.results.map((r: { domain: string }) => r.domain)).toEqual(['acme.example', 'acmewidgets.example', 'other.example']);
      expect(found.results[0]).toMatchObject({ domain: 'acme.example', canonical_domain: 'acme.example', brand_name: 'Acme', keller_type: 'master' });
      expect((await (await s().fetch('/api/brands/find?q=acme&limit=1')).json()).results).toHaveLength(1);
      const short = await s().fetch('/api/brands/find?q=a');
      expect(short.status).toBe(400);
      expect((await short.json()).message).toContain('q');
      expect((await s().fetch('/api/brands/find?q=acme&limit=500')).status).toBe(400);
      expect((await s().fetch(`/api/brands/find?q=${encodeURIComponent('a\u0000b')}`)).status).toBe(400);
    });

    test('checkPropertyList: buckets, a stored report for getPropertyCheckReport, edge rules', async () => {
      const { key } = await newKey(s().deployment);
      const saved = await s().fetch('/api/properties/save', {
        method: 'POST',
        token: key,
        json: { publisher_domain: 'known-pub.example', authorized_agents: [{ url: 'https://sales.example/mcp' }] },
      });
      expect(saved.status).toBe(200);
      const res = await s().fetch('/api/properties/check', {
        method: 'POST',
        json: {
          domains: [
            'www.Known-Pub.example',
            'known-pub.example',
            'securepubads.g.doubleclick.net',
            'fresh-pub.example',
            'not a domain',
            'https://m.fresh-two.example/path',
          ],
        },
      });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.summary).toEqual({ total: 6, remove: 3, modify: 2, assess: 2, ok: 1 });
      expect(body.ok).toEqual([{ domain: 'known-pub.example', source: 'hosted' }]);
      expect(body.modify).toEqual([
        expect.objectContaining({ input: 'www.Known-Pub.example', canonical: 'known-pub.example' }),
        expect.objectContaining({ input: 'https://m.fresh-two.example/path', canonical: 'fresh-two.example' }),
      ]);
      expect(body.assess).toEqual([{ domain: 'fresh-pub.example' }, { domain: 'fresh-two.example' }]);
      expect(body.remove.map((r: { reason: string; canonical: string }) => `${r.reason} ${r.canonical}`)).toEqual([
        'duplicate known-pub.example',
        'blocked securepubads.g.doubleclick.net',
        'blocked not a domain',
      ]);
      expect(body.report_id).toMatch(/^[0-9a-f-]{36}$/);

      const report = await (await s().fetch(`/api/properties/check/${body.report_id}`)).json();
      expect(report).toMatchObject({ report_id: body.report_id, summary: body.summary });
      expect((await s().fetch(`/api/properties/check/${crypto.randomUUID()}`)).status).toBe(404);
      expect((await s().fetch('/api/properties/check/not-a-uuid')).status).toBe(400);
      expect((await s().fetch('/api/properties/check', { method: 'POST', json: { domains: [] } })).status).toBe(400);
      expect((await s().fetch('/api/properties/check', { method: 'POST', json: { domains: ['a\u0000.example'] } })).status).toBe(400);
    });

    test('policy registry: save (members, owner only), resolve, version pin, bulk, listing with filters, history', async () => {
      const policy = {
        policy_id: 'eu_alcohol_watershed',
        version: '1.0.0',
        name: 'EU alcohol watershed',
        category: 'regulation',
        enforcement: 'must',
        policy: 'Alcohol ads must not run during children programming.',
        jurisdictions: ['EU'],
        region_aliases: { EU: ['DE', 'FR'] },
        policy_categories: ['alcohol'],
        governance_domains: ['campaign'],
        source_url: 'https://eur-lex.europa.eu/example',
      };
      expect((await s().fetch('/api/policies/save', { method: 'POST', json: policy })).status).toBe(401);
      const { key: outsider } = await newKey(s().deployment, 'public');
      expect((await s().fetch('/api/policies/save', { method: 'POST', token: outsider, json: policy })).status).toBe(403);

      const { key } = await newKey(s().deployment, 'member', 'Policy Editor');
      const created = await s().fetch('/api/policies/save', { method: 'POST', token: key, json: policy });
      expect(created.status).toBe(200);
      expect(await created.json()).toMatchObject({ success: true, policy_id: 'eu_alcohol_watershed', revision_number: 1 });
      const updated = await s().fetch('/api/policies/save', {
        method: 'POST',
        token: key,
        json: { ...policy, version: '1.1.0', edit_summary: 'Clarified hours' },
      });
      expect(await updated.json()).toMatchObject({ success: true, revision_number: 2 });
      const { key: other } = await newKey(s().deployment);
      expect((await s().fetch('/api/policies/save', { method: 'POST', token: other, json: { ...policy, name: 'Hijacked' } })).status).toBe(403);

      const resolved = await (await s().fetch('/api/policies/resolve?policy_id=eu_alcohol_watershed')).json();
      expect(resolved).toMatchObject({
        policy_id: 'eu_alcohol_watershed',
        version: '1.1.0',
        category: 'regulation',
        source_type: 'community',
        review_status: 'approved',
        guidance: null,
        exemplars: null,
        channels: null,
      });
      expect((await s().fetch('/api/policies/resolve?policy_id=eu_alcohol_watershed&version=1.1.0')).status).toBe(200);
      const pinned = await s().fetch('/api/policies/resolve?policy_id=eu_alcohol_watershed&version=1.0.0');
      expect(pinned.status).toBe(404);
      expect(await pinned.json()).toMatchObject({ policy_id: 'eu_alcohol_watershed' });
      expect((await s().fetch('/api/policies/resolve?policy_id=nope')).status).toBe(404);

      const bulk = await (await s().fetch('/api/policies/resolve/bulk', { method: 'POST', json: { policy_ids: ['eu_alcohol_watershed', 'nope'] } })).json();
      expect(bulk.results.eu_alcohol_watershed.version).toBe('1.1.0');
      expect(bulk.results.nope).toBeNull();

      const standard = {
        ...policy,
        policy_id: 'brand_safety_basic',
        name: 'Brand safety basics',
        category: 'standard',
        enforcement: 'should',
        jurisdictions: [],
      };
      expect((await s().fetch('/api/policies/save', { method: 'POST', token: key, json: standard })).status).toBe(200);
      const all = await (await s().fetch('/api/policies/registry')).json();
      expect(all.stats).toEqual({ total: 2, regulation: 1, standard: 1 });
      expect(all.policies.map((p: { policy_id: string }) => p.policy_id)).toEqual(['brand_safety_basic', 'eu_alcohol_watershed']);
      expect(all.policies[0].policy).toBeUndefined(); // summaries
      const filtered = async (q: string) =>
        (await (await s().fetch(`/api/policies/registry?${q}`)).json()).policies.map((p: { policy_id: string }) => p.policy_id);
      expect(await filtered('category=regulation')).toEqual(['eu_alcohol_watershed']);
      expect(await filtered('jurisdiction=DE')).toEqual(['eu_alcohol_watershed']); // through the EU alias
      expect(await filtered('search=safety')).toEqual(['brand_safety_basic']);
      expect(await filtered('policy_category=alcohol&enforcement=must')).toEqual(['eu_alcohol_watershed']);

      const history = await (await s().fetch('/api/policies/history?policy_id=eu_alcohol_watershed')).json();
      expect(history).toMatchObject({ policy_id: 'eu_alcohol_watershed', total: 2 });
      expect(history.revisions.map((r: { revision_number: number; edit_summary: string }) => `${r.revision_number} ${r.edit_summary}`)).toEqual([
        '2 Clarified hours',
        '1 Created policy',
      ]);
      expect(history.revisions[0]).toMatchObject({ editor_name: 'Policy Editor', is_rollback: false });
      expect((await s().fetch('/api/policies/history?policy_id=nope')).status).toBe(404);

      // Edge rules: bad input is a 400 naming the field, nothing written.
      const bad = async (json: unknown) => {
        const res = await s().fetch('/api/policies/save', { method: 'POST', token: key, json });
        return { status: res.status, message: (await res.json()).message as string };
      };
      expect(await bad({ ...policy, policy_id: 'Bad Id' })).toMatchObject({ status: 400, message: expect.stringContaining('policy_id') });
      expect(await bad({ ...policy, category: 'law' })).toMatchObject({ status: 400, message: expect.stringContaining('category') });
      expect(await bad({ ...policy, source_url: 'javascript:alert(1)' })).toMatchObject({ status: 400, message: expect.stringContaining('source_url') });
      expect(await bad({ ...policy, name: 'x\u0000y' })).toMatchObject({ status: 400, message: expect.stringContaining('name') });
      expect(await bad({ ...policy, effective_date: '2026-13-45' })).toMatchObject({ status: 400, message: expect.stringContaining('effective_date') });
      expect((await s().fetch('/api/policies/resolve/bulk', { method: 'POST', json: { policy_ids: [] } })).status).toBe(400);
      expect((await s().fetch('/api/policies/registry?limit=5000')).status).toBe(400);
      expect((await (await s().fetch('/api/policies/history?policy_id=eu_alcohol_watershed')).json()).total).toBe(2);
    });
  },
);
