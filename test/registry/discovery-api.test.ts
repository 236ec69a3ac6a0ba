import { expect, test } from 'bun:test';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import restHost from '../../hosts/rest/index.ts';
import auth from '../../plugins/auth/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import { Discovery } from '../../core/ports/discovery.ts';
import { EventLog, type NewEvent } from '../../core/ports/events.ts';

const A = 'member-a-token-0000000001';
const B = 'member-b-token-0000000002';
const PUBLIC_TIER = 'public-c-token-0000000003';
const now = new Date();

const newsAdagents = {
  contact: { name: 'News Ops' },
  properties: [
    {
      property_id: 'news',
      property_type: 'website',
      name: 'Daily News',
      identifiers: [{ type: 'domain', value: 'news.example' }],
      tags: ['premium'],
      supported_channels: ['display'],
    },
    { property_id: 'app', property_type: 'mobile_app', name: 'News App', identifiers: [{ type: 'bundle_id', value: 'com.news.app' }], tags: ['mobile'] },
  ],
  authorized_agents: [
    {
      url: 'https://sales.agency.example/mcp',
      authorized_for: 'Everything',
      authorization_type: 'property_tags',
      property_tags: ['premium', 'mobile'],
      delegation_type: 'delegated',
      countries: ['US'],
    },
    { url: 'https://direct.example', authorized_for: 'Website', authorization_type: 'property_ids', property_ids: ['news'], delegation_type: 'direct' },
  ],
};
const agencyBrand = {
  house: { domain: 'agency.example', name: 'Agency House' },
  brands: [
    {
      id: 'agency',
      names: [{ en: 'Agency' }],
      properties: [{ type: 'website', identifier: 'news.example', relationship: 'delegated' }],
      agents: [{ type: 'sales', url: 'https://sales.agency.example/mcp' }],
    },
  ],
};

const events: NewEvent[] = [];
const recorder = {
  async append(_tx: unknown, e: NewEvent | readonly NewEvent[]) {
    events.push(...(Array.isArray(e) ? e : [e as NewEvent]));
  },
};

forEachDatabase(
  'discovery api',
  async (adapter, schema) => {
    const server = await startServer(
      adapter,
      schema,
      [
        auth({
          testTokens: [
            { token: A, name: 'Org A', tier: 'member' },
            { token: B, name: 'Org B', tier: 'member' },
            { token: PUBLIC_TIER, name: 'Org C', tier: 'public' },
          ],
        }),
        searchPostgres(),
        registryAgents(),
        restHost(),
      ],
      { overrides: [[EventLog, recorder]] },
    );
    await server.deployment.start?.();
    const projection = server.deployment.get(Discovery);
    await projection.projectAdagents('news.example', newsAdagents, { valid: true, now });
    await projection.projectBrandJson('agency.example', agencyBrand, { valid: true, now });
    return server;
  },
  (server) => server.close(),
  (get) => {
    const s = (): TestServer => get();
    const json = async (path: string, init?: Parameters<TestServer['fetch']>[1]) => {
      const res = await s().fetch(path, init);
      return { status: res.status, body: (await res.json()) as any };
    };
    const enroll = (token: string, body: Record<string, unknown>) => json('/api/registry/agents', { method: 'POST', token, json: body });
    // Writes queue index changes and wake the search-outbox job; wait for it before searching.
    const indexed = () => s().deployment.scheduler.idle();

    test('enrollment: auth required, API tier required, creates then updates, emits agent.profile_updated', async () => {
      const body = {
        url: 'https://Sales.Agency.example/mcp/',
        name: 'Agency Sales',
        type: 'sales',
        visibility: 'public',
        operator_domain: 'agency.example',
        inventory: { categories: ['IAB1'], delivery_types: ['guaranteed'], has_tmp: true },
      };
      expect((await enroll('', body)).status).toBe(401);
      expect((await json('/api/registry/agents', { method: 'POST', json: body })).status).toBe(401);
      expect((await enroll(PUBLIC_TIER, body)).status).toBe(403);
      const created = await enroll(A, body);
      expect(created.status).toBe(201);
      expect(created.body.agent.url).toBe('https://sales.agency.example/mcp');
      expect(created.body.agent.property_summary.property_count).toBe(2);
      expect(events.at(-1)).toMatchObject({
        event_type: 'agent.profile_updated',
        entity_type: 'agent',
        payload: { agent_url: 'https://sales.agency.example/mcp', change: 'enrolled' },
      });
      const updated = await enroll(A, { ...body, name: 'Agency Sales 2' });
      expect(updated.status).toBe(200);
      expect(updated.body.agent.name).toBe('Agency Sales 2');
      const stolen = await enroll(B, body);
      expect(stolen.status).toBe(409);
      const bad = await enroll(A, { ...body, url: 'ftp://x' });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain('url');
      await enroll(A, {
        url: 'https://measure.example',
        name: 'Measure',
        type: 'measurement',
        capabilities: { metrics: [{ metric_id: 'viewability', accreditations: [{ accrediting_body: 'MRC' }] }, { metric_id: 'attention_score' }] },
      });
      await enroll(A, { url: 'https://mo.example', name: 'Members Only', type: 'buying', visibility: 'members_only' });
      await enroll(A, { url: 'https://priv.example', name: 'Private', type: 'buying', visibility: 'private', inventory: { channels: ['display'] } });
      await enroll(B, { url: 'https://other.example', name: 'Other B', type: 'creative', visibility: 'private' });
    });

    test('catalog visibility: anonymous public, API tier + members_only, owner + private', async () => {
      const urls = async (token?: string) => (await json('/api/registry/agents', { token })).body.agents.map((a: any) => a.url).sort();
      expect(await urls()).toEqual(['https://measure.example', 'https://sales.agency.example/mcp']);
      expect(await urls(PUBLIC_TIER)).toEqual(['https://measure.example', 'https://sales.agency.example/mcp']);
      expect(await urls(B)).toEqual(['https://measure.example', 'https://mo.example', 'https://other.example', 'https://sales.agency.example/mcp']);
      expect(await urls(A)).toEqual(['https://measure.example', 'https://mo.example', 'https://priv.example', 'https://sales.agency.example/mcp']);
      const { body } = await json('/api/registry/agents');
      expect(body.count).toBe(2);
      const sales = body.agents.find((a: any) => a.type === 'sales');
      expect(sales).toMatchObject({ member: { name: 'Org A' }, publisher_domains: ['news.example'], protocol: 'mcp' });
      expect(sales.capabilities).toBeUndefined();
    });

    test('catalog filters: type, metric_id / accreditation OR, q substring, capabilities enrichment', async () => {
      expect((await json('/api/registry/agents?type=sales')).body.agents.map((a: any) => a.url)).toEqual(['https://sales.agency.example/mcp']);
      const byMetric = await json('/api/registry/agents?metric_id=nope&metric_id=viewability');
      expect(byMetric.body.agents.map((a: any) => a.url)).toEqual(['https://measure.example']);
      expect((await json('/api/registry/agents?accreditation=JIC')).body.count).toBe(0);
      expect((await json('/api/registry/agents?accreditation=MRC')).body.count).toBe(1);
      expect((await json('/api/registry/agents?q=ATTENT')).body.count).toBe(1);
      expect((await json('/api/registry/agents?q=zzz')).body.count).toBe(0);
      const enriched = await json('/api/registry/agents?capabilities=true&type=measurement');
      const metrics = enriched.body.agents[0].capabilities.measurement.metrics;
      expect(metrics.find((m: any) => m.metric_id === 'viewability').accreditations).toEqual([{ accrediting_body: 'MRC', verified_by_aao: false }]);
      expect(enriched.body.count).toBe(1);
    });

    test('catalog 400s: q with % or _, q over 64 chars, measurement filters with another type, bad type', async () => {
      for (const path of [
        '/api/registry/agents?q=10%25',
        '/api/registry/agents?q=a_b',
        `/api/registry/agents?q=${'x'.repeat(65)}`,
        '/api/registry/agents?metric_id=viewability&type=sales',
        '/api/registry/agents?type=robot',
        '/api/registry/agents?capabilities=yes',
      ]) {
        const res = await json(path);
        expect({ path, status: res.status }).toEqual({ path, status: 400 });
        expect(typeof res.body.message).toBe('string');
      }
      expect((await json('/api/registry/agents?metric_id=viewability&type=measurement')).status).toBe(200);
    });

    test('agent search: auth, filters, visibility, score and matched_filters', async () => {
      await indexed();
      expect((await json('/api/registry/agents/search')).status).toBe(401);
      const all = await json('/api/registry/agents/search?channels=display,olv&markets=US', { token: B });
      expect(all.status).toBe(200);
      expect(all.body.results.map((r: any) => r.agent_url)).toEqual(['https://sales.agency.example/mcp']);
      const hit = all.body.results[0];
      expect(hit.matched_filters).toEqual(['channels', 'markets']);
      expect(hit.relevance_score).toBeCloseTo(1 + 0.1 * Math.log(3) + 0.05, 12);
      expect(hit).toMatchObject({ property_count: 2, publisher_count: 1, has_tmp: true, categories: ['IAB1'], delivery_types: ['guaranteed'] });
      // The private agent with display inventory: only its owner finds it (direct.example is discovered, public).
      const display = async (token: string) =>
        (await json('/api/registry/agents/search?channels=display', { token })).body.results.map((r: any) => r.agent_url).sort();
      expect(await display(A)).toEqual(['https://direct.example', 'https://priv.example', 'https://sales.agency.example/mcp']);
      expect(await display(B)).toEqual(['https://direct.example', 'https://sales.agency.example/mcp']);
      expect((await json('/api/registry/agents/search?has_tmp=true&min_properties=2', { token: B })).body.results).toHaveLength(1);
      expect((await json('/api/registry/agents/search?min_properties=3', { token: B })).body.results).toHaveLength(0);
    });

    test('agent search 400s: >100 values, bad CSV value, limit 0 / 201 / text, malformed cursor', async () => {
      const many = Array.from({ length: 101 }, (_, i) => `c${i}`).join(',');
      for (const qs of [
        `channels=${many}`,
        `markets=${'x'.repeat(101)}`,
        'limit=0',
        'limit=201',
        'limit=ten',
        'cursor=%25%25',
        'cursor=bm90LWEtY3Vyc29y',
        'has_tmp=maybe',
        'min_properties=-1',
      ]) {
        const res = await json(`/api/registry/agents/search?${qs}`, { token: B });
        expect({ qs, status: res.status }).toEqual({ qs, status: 400 });
      }
      const ok = await json(`/api/registry/agents/search?channels=${Array.from({ length: 100 }, (_, i) => `c${i}`).join(',')}&limit=200`, { token: B });
      expect(ok.status).toBe(200);
    });

    test('agent search pages with an opaque cursor', async () => {
      const first = await json('/api/registry/agents/search?limit=1', { token: A });
      expect(first.body.has_more).toBe(true);
      const seen = [first.body.results[0].agent_url];
      let cursor = first.body.cursor;
      while (cursor) {
        const page = await json(`/api/registry/agents/search?limit=1&cursor=${encodeURIComponent(cursor)}`, { token: A });
        seen.push(...page.body.results.map((r: any) => r.agent_url));
        cursor = page.body.cursor;
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toContain('https://direct.example');
      // A cursor of one query is rejected on another.
      const other = await json(`/api/registry/agents/search?limit=1&channels=display&cursor=${encodeURIComponent(first.body.cursor)}`, { token: A });
      expect(other.status).toBe(400);
    });

    test('publishers, publisher, stats and operator', async () => {
      const list = await json('/api/registry/publishers');
      expect(list.body).toMatchObject({ count: 1, publishers: [{ domain: 'news.example', agent_count: 2, property_count: 2, has_valid_adagents: true }] });
      const pub = await json('/api/registry/publisher?domain=NEWS.example');
      expect(pub.body.adagents_valid).toBe(true);
      expect(pub.body.properties.map((p: any) => p.id)).toEqual(['app', 'news']);
      expect(pub.body.authorized_agents.map((a: any) => [a.url, a.property_count])).toEqual([
        ['https://direct.example', 1],
        ['https://sales.agency.example/mcp', 2],
      ]);
      expect((await json('/api/registry/publisher?domain=unknown.example')).status).toBe(404);
      expect((await json('/api/registry/publisher?domain=not a domain')).status).toBe(400);
      const stats = await json('/api/registry/stats');
      expect(stats.body.publishers.total).toBe(1);
      expect(stats.body.properties.active).toBe(2);
      expect(stats.body.authorizations).toBe(3);
      expect(stats.body.agents.registered).toBe(5);
      const op = await json('/api/registry/operator?domain=agency.example');
      expect(op.body).toMatchObject({ domain: 'agency.example', member: { name: 'Org A' }, publishers: ['news.example'] });
      expect(op.body.agents[0]).toMatchObject({
        url: 'https://sales.agency.example/mcp',
        authorized_by: [{ publisher_domain: 'news.example', authorized_for: 'Everything', source: 'adagents_json' }],
      });
    });

    test('operator visibility: members_only for API tier, private for the owner', async () => {
      await enroll(A, { url: 'https://mo.example', name: 'Members Only', type: 'buying', visibility: 'members_only', operator_domain: 'ops.example' });
      await enroll(A, { url: 'https://priv.example', name: 'Private', type: 'buying', visibility: 'private', operator_domain: 'ops.example' });
      const urls = async (token?: string) => (await json('/api/registry/operator?domain=ops.example', { token })).body.agents.map((a: any) => a.url);
      expect(await urls()).toEqual([]);
      expect(await urls(PUBLIC_TIER)).toEqual([]);
      expect(await urls(B)).toEqual(['https://mo.example']);
      expect(await urls(A)).toEqual(['https://mo.example', 'https://priv.example']);
    });

    test('lookups by domain, property identifier and agent', async () => {
      const byDomain = await json('/api/registry/lookup/domain/news.example');
      expect(byDomain.body.authorized_agents.map((a: any) => a.url)).toEqual(['https://direct.example', 'https://sales.agency.example/mcp']);
      const byProp = await json('/api/registry/lookup/property?type=domain&value=www.news.example');
      expect(byProp.body.agents.map((a: any) => a.agent_url)).toEqual(['https://direct.example', 'https://sales.agency.example/mcp']);
      expect(byProp.body.agents[0].property).toMatchObject({ id: 'news', name: 'Daily News' });
      expect((await json('/api/registry/lookup/property?type=domain')).status).toBe(400);
      const domains = await json(`/api/registry/lookup/agent/${encodeURIComponent('https://sales.agency.example/mcp')}/domains`);
      expect(domains.body).toEqual({ agent_url: 'https://sales.agency.example/mcp', domains: ['news.example'], count: 1 });
    });

    test('two-sided property authorization says which side failed', async () => {
      const check = async (agent: string, type: string, value: string, extra = '') =>
        (
          await json(
            `/api/registry/validate/property-authorization?agent_url=${encodeURIComponent(agent)}&identifier_type=${type}&identifier_value=${encodeURIComponent(value)}${extra}`,
          )
        ).body;
      const both = await check('https://sales.agency.example/mcp', 'domain', 'news.example');
      expect(both).toMatchObject({ authorized: true, failed_side: null, property_id: 'news', publisher_domain: 'news.example' });
      expect(both.checks.operator).toMatchObject({ ok: true, operator_domain: 'agency.example', relationship: 'delegated' });
      // Publisher authorizes the app, but the operator's brand.json does not declare it.
      const operatorMissing = await check('https://sales.agency.example/mcp', 'bundle_id', 'com.news.app');
      expect(operatorMissing).toMatchObject({ authorized: false, failed_side: 'operator' });
      expect(operatorMissing.checks.publisher.ok).toBe(true);
      // Claimed delegation type differs from adagents.json: publisher side fails, operator side holds.
      const wrongClaim = await check('https://sales.agency.example/mcp', 'domain', 'news.example', '&delegation_type=direct');
      expect(wrongClaim).toMatchObject({ authorized: false, failed_side: 'publisher' });
      // Authorized by the publisher, no brand.json names the agent's operator.
      const noOperator = await check('https://direct.example', 'domain', 'news.example');
      expect(noOperator).toMatchObject({ authorized: false, failed_side: 'operator' });
      const stranger = await check('https://stranger.example', 'domain', 'news.example');
      expect(stranger).toMatchObject({ authorized: false, failed_side: 'both' });
      expect((await json('/api/registry/validate/property-authorization?agent_url=nope&identifier_type=domain&identifier_value=x')).status).toBe(400);
    });

    test('a relationship mismatch in brand.json fails the operator side', async () => {
      const projection = s().deployment.get(Discovery);
      const mismatched = structuredClone(agencyBrand);
      mismatched.brands[0]!.properties[0]!.relationship = 'ad_network';
      await projection.projectBrandJson('agency.example', mismatched, { valid: true, now });
      const v = (
        await json(
          `/api/registry/validate/property-authorization?agent_url=${encodeURIComponent('https://sales.agency.example/mcp')}&identifier_type=domain&identifier_value=news.example`,
        )
      ).body;
      expect(v).toMatchObject({ authorized: false, failed_side: 'operator' });
      expect(v.checks.operator.reason).toContain('ad_network');
      await projection.projectBrandJson('agency.example', agencyBrand, { valid: true, now });
    });

    test('product authorization and identifier expansion', async () => {
      const body = {
        agent_url: 'https://sales.agency.example/mcp',
        publisher_properties: [
          { publisher_domain: 'news.example', selection_type: 'all' },
          { publisher_domain: 'news.example', selection_type: 'by_id', property_ids: ['news', 'ghost'] },
        ],
      };
      const res = await json('/api/registry/validate/product-authorization', { method: 'POST', json: body });
      expect(res.body).toMatchObject({ authorized: false, total_requested: 4, total_authorized: 2, coverage_percentage: 50 });
      expect(res.body.selectors[0].unauthorized).toEqual([{ property_id: 'app', failed_side: 'operator', reason: expect.any(String) }]);
      expect(res.body.selectors[1].unauthorized[0]).toMatchObject({ property_id: 'ghost', failed_side: 'publisher' });
      const expanded = await json('/api/registry/expand/product-identifiers', { method: 'POST', json: body });
      expect(expanded.body.property_count).toBe(2);
      expect(expanded.body.identifiers.map((i: any) => i.value).sort()).toEqual(['com.news.app', 'news.example']);
      const bad = await json('/api/registry/validate/product-authorization', {
        method: 'POST',
        json: { agent_url: 'https://x.example', publisher_properties: [{ publisher_domain: 'news.example', selection_type: 'by_id' }] },
      });
      expect(bad.status).toBe(400);
    });

    test('adagents tools: validate a document or a stored domain, create, properties/validate', async () => {
      const good = await json('/api/adagents/validate', { method: 'POST', json: { document: newsAdagents } });
      expect(good.body).toMatchObject({ success: true, data: { valid: true, errors: [] } });
      expect(good.body.data.warnings.some((w: any) => w.path === '/last_updated')).toBe(true);
      const bad = await json('/api/adagents/validate', { method: 'POST', json: { document: { authorized_agents: [{ url: 'https://x.example' }] } } });
      expect(bad.body.data.valid).toBe(false);
      expect(bad.body.data.errors.length).toBeGreaterThan(0);
      const stored = await json('/api/adagents/validate', { method: 'POST', json: { domain: 'news.example' } });
      expect(stored.body.data).toMatchObject({ domain: 'news.example', valid: true, agent_count: 2, property_count: 2 });
      expect((await json('/api/adagents/validate', { method: 'POST', json: { domain: 'unknown.example' } })).status).toBe(404);
      expect((await json('/api/adagents/validate', { method: 'POST', json: {} })).status).toBe(400);
      const created = await json('/api/adagents/create', {
        method: 'POST',
        json: {
          contact: { name: 'Ops' },
          properties: newsAdagents.properties,
          authorized_agents: [{ url: 'https://Sales.Example/', authorized_for: 'All', property_ids: ['news'], delegation_type: 'direct' }],
        },
      });
      expect(created.status).toBe(200);
      expect(created.body.data.document.authorized_agents[0]).toMatchObject({ url: 'https://sales.example', authorization_type: 'property_ids' });
      const recheck = await json('/api/adagents/validate', { method: 'POST', json: { document: created.body.data.document } });
      expect(recheck.body.data.valid).toBe(true);
      const pv = await json('/api/properties/validate?domain=news.example');
      expect(pv.body).toMatchObject({ domain: 'news.example', valid: true });
    }, 30_000);

    test('search across brands, publishers and properties; manifest references', async () => {
      const res = await json('/api/search?q=news');
      expect(res.body.publishers.map((p: any) => p.domain)).toEqual(['news.example']);
      expect(res.body.properties.map((p: any) => p.name)).toEqual(['Daily News', 'News App']);
      expect((await json('/api/search?q=agency')).body.brands.map((b: any) => b.domain)).toEqual(['agency.example']);
      expect((await json('/api/search?q=%25%25')).body).toMatchObject({ brands: [], publishers: [], properties: [] });
      expect((await json('/api/search?q=a')).status).toBe(400);
      const ref = await json('/api/manifest-refs/lookup?domain=agency.example');
      expect(ref.body).toMatchObject({
        success: true,
        found: true,
        reference: { reference_type: 'url', manifest_url: 'https://agency.example/.well-known/brand.json', verification_status: 'valid' },
      });
      expect((await json('/api/manifest-refs/lookup?domain=none.example')).body).toEqual({ success: false, found: false });
    });

    test('removing an agent: only its owner, then gone from catalog and search, agent.removed emitted', async () => {
      const del = (token: string, url: string) => json(`/api/registry/agents?url=${encodeURIComponent(url)}`, { method: 'DELETE', token });
      expect((await del(B, 'https://measure.example')).status).toBe(403);
      expect((await del(A, 'https://measure.example')).status).toBe(200);
      expect(events.at(-1)).toMatchObject({ event_type: 'agent.removed', payload: { agent_url: 'https://measure.example' } });
      expect((await del(A, 'https://measure.example')).status).toBe(404);
      // An agent still named by a publisher stays discovered: out of the catalog, still in search.
      expect((await del(A, 'https://sales.agency.example/mcp')).status).toBe(200);
      expect((await json('/api/registry/agents')).body.count).toBe(0);
      await indexed();
      const found = await json('/api/registry/agents/search?channels=display', { token: B });
      expect(found.body.results.map((r: any) => [r.agent_url, r.has_tmp]).sort()).toEqual([
        ['https://direct.example', false],
        ['https://sales.agency.example/mcp', false],
      ]);
    });
  },
);
