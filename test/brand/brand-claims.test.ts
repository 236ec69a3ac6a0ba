import { expect, test } from 'bun:test';
import { Database } from '../../core/ports/database.ts';
import { BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import brandAgent from '../../plugins/brand-agent/index.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import restHost from '../../hosts/rest/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import a2aHost from '../../hosts/a2a/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import type { startTlsFront } from '../support/tls-front.ts';
import { forEachDatabase } from '../support/db.ts';
import { clientFor, type Body, type HostName } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { brandAgentReadingRegistry, checkSigned, schemaOf } from '../support/brand-claims.ts';
import { newKey } from '../support/principals.ts';

const TOKEN = 'brand-claims-test-token-0123456789';
const HOUSE = 'trail-holdings.example';
const BRANDS = [{ domain: HOUSE }, { domain: 'trail.example', brand_id: 'trail_gear' }, { domain: 'bean.example' }, { domain: 'peak.example' }];

/** The house portfolio (stored for the house and, as its brand.json, for the leaf): inline brand, a brand_ref, properties, marks. */
const PORTFOLIO = {
  house: { domain: HOUSE, name: 'Trail Holdings' },
  brands: [
    {
      id: 'trail_gear',
      url: 'https://trail.example',
      names: [{ en: 'Trail Gear' }],
      properties: [
        { type: 'website', identifier: 'trail.example', primary: true },
        { type: 'mobile_app', identifier: 'com.trail.app', store: 'apple', region: 'US' },
        { type: 'website', identifier: 'trailblog.example', relationship: 'delegated' },
      ],
      trademarks: [
        { registry: 'USPTO', number: '1234567', mark: 'TRAIL GEAR', countries: ['US'], nice_classes: [25] },
        { registry: 'EUIPO', number: 'EU0099', mark: 'TRAIL GEAR', license_type: 'licensed_in', licensor_domain: 'trail-eu.example', countries: ['FR'] },
        { registry: 'USPTO', number: '1111', mark: 'OLD TRAIL', status: 'expired' },
      ],
    },
    // Its domain publishes a house redirect: its data is here.
    { id: 'peak_gear', url: 'https://peak.example', names: [{ en: 'Peak Gear' }], properties: [{ type: 'website', identifier: 'peak.example' }] },
  ],
  brand_refs: [{ domain: 'summit.example', brand_id: 'summit', effective_at: '2025-01-01T00:00:00Z' }],
  trademarks: [{ registry: 'USPTO', number: '7000001', mark: 'TRAIL HOLDINGS' }],
};

async function seedRegistry(server: TestServer): Promise<void> {
  const records = server.deployment.get(BrandJsonRecords);
  await server.deployment.get(Database).transaction(async (tx) => {
    await records.record(tx, HOUSE, PORTFOLIO);
    await records.record(tx, 'trail.example', PORTFOLIO);
    await records.record(tx, 'peak.example', { house: HOUSE });
  });
  const { key } = await newKey(server.deployment);
  const saved = await server.fetch('/api/brands/save', {
    method: 'POST',
    token: key,
    json: { domain: 'bean.example', brand_name: 'Bean Roasters', brand_manifest: { description: 'Coffee' } },
  });
  if (!saved.ok) throw new Error(`save failed: ${await saved.text()}`);
}

forEachDatabase<TestServer>(
  'verify_brand_claim(s) on the brand agent',
  async (adapter, schema) => {
    const server = await startServer(
      adapter,
      schema,
      [
        auth({ testTokens: [{ token: TOKEN }] }),
        rateLimit(),
        registryBrands(),
        restHost({ title: 'brand' }),
        signerKeyring(),
        tasks({ worker: false }),
        idempotency(),
        brandAgent({ brands: BRANDS }),
        restTasks(),
        mcpHost(),
        a2aHost(),
      ],
      { env: { PROTOCOL_NAMESPACE: 'adcp' } },
    );
    await seedRegistry(server);
    return server;
  },
  (s) => s.close(),
  (get) => {
    /** One claim, anonymously (caller identity `anonymous` in the request hash); the signed payload checked; returns body and payload. */
    const verify = async (args: Record<string, any>, host: HostName = 'rest') => {
      const c = await clientFor(host, get(), null);
      const r = await c.call('verify_brand_claim', args);
      await c.close();
      if (!r.ok) return { body: r.body, payload: null };
      const binding = { task: 'verify_brand_claim', caller_identity: 'anonymous', claim_type: args.claim_type, claim: args.claim };
      return { body: r.body, payload: await checkSigned(get(), 'verify_brand_claim', r.body, binding) };
    };

    test('subsidiary: the house confirms its inline brand and its brand_ref, refuses others; a leaf has none', async () => {
      const summit = await verify({ brand_id: HOUSE, claim_type: 'subsidiary', claim: { subsidiary_domain: 'summit.example' } });
      expect(summit.body).toMatchObject({
        claim_type: 'subsidiary',
        verification_status: 'owned',
        details: { brand_id: 'summit', first_observed_by_house_at: '2025-01-01T00:00:00Z' },
      });
      expect(summit.payload!.brand_domain).toBe(HOUSE);
      const trail = await verify({
        brand_id: HOUSE,
        claim_type: 'subsidiary',
        claim: { subsidiary_domain: 'Trail.example', subsidiary_brand_id: 'trail_gear' },
      });
      expect(trail.body).toMatchObject({ verification_status: 'owned', details: { brand_id: 'trail_gear' } });
      const wrongId = await verify({ brand_id: HOUSE, claim_type: 'subsidiary', claim: { subsidiary_domain: 'trail.example', subsidiary_brand_id: 'other' } });
      expect(wrongId.body.verification_status).toBe('disputed');
      const stranger = await verify({ brand_id: HOUSE, claim_type: 'subsidiary', claim: { subsidiary_domain: 'stranger.example' } });
      expect(stranger.body.verification_status).toBe('not_ours');
      const fromLeaf = await verify({ brand_id: 'trail_gear', claim_type: 'subsidiary', claim: { subsidiary_domain: 'summit.example' } });
      expect(fromLeaf.body.verification_status).toBe('not_ours');
      expect(fromLeaf.payload!.brand_domain).toBe('trail.example');
    });

    test('parent: the leaf confirms its house (over each host) and disputes another', async () => {
      for (const host of ['rest', 'mcp', 'a2a'] as const) {
        const house = await verify({ brand_id: 'trail_gear', claim_type: 'parent', claim: { parent_domain: HOUSE } }, host);
        expect(house.body).toMatchObject({ claim_type: 'parent', verification_status: 'owned', details: { house_domain: HOUSE } });
      }
      // A house redirect names the parent; the house's portfolio, listing the brand back, holds its properties.
      const redirect = await verify({ brand_id: 'peak.example', claim_type: 'parent', claim: { parent_domain: HOUSE } });
      expect(redirect.body).toMatchObject({ verification_status: 'owned', details: { house_domain: HOUSE } });
      expect(redirect.payload!.brand_domain).toBe('peak.example');
      const peakSite = await verify({ brand_id: 'peak.example', claim_type: 'property', claim: { property: { type: 'website', identifier: 'peak.example' } } });
      expect(peakSite.body).toMatchObject({ verification_status: 'owned', details: { brand_id: 'peak_gear' } });
      const notPeaks = await verify({
        brand_id: 'peak.example',
        claim_type: 'property',
        claim: { property: { type: 'website', identifier: 'trail.example' } },
      });
      expect(notPeaks.body.verification_status).toBe('not_ours');
      const other = await verify({ brand_id: 'trail_gear', claim_type: 'parent', claim: { parent_domain: 'acme.example', claimant_says: 'we own them' } });
      expect(other.body).toMatchObject({ verification_status: 'disputed', details: { house_domain: HOUSE } });
    });

    test('property: owned site and app, a delegated site, a stranger', async () => {
      const site = await verify({ brand_id: 'trail_gear', claim_type: 'property', claim: { property: { type: 'website', identifier: 'www.trail.example' } } });
      expect(site.body).toMatchObject({ verification_status: 'owned', details: { relationship: 'owned', brand_id: 'trail_gear' } });
      const app = await verify({
        brand_id: 'trail_gear',
        claim_type: 'property',
        claim: { property: { type: 'mobile_app', identifier: 'com.trail.app', store: 'apple' }, use_case: 'advertising' },
      });
      expect(app.body).toMatchObject({ verification_status: 'owned', details: { regions: ['US'] } });
      const wrongStore = await verify({
        brand_id: 'trail_gear',
        claim_type: 'property',
        claim: { property: { type: 'mobile_app', identifier: 'com.trail.app', store: 'google' } },
      });
      expect(wrongStore.body.verification_status).toBe('not_ours');
      const delegated = await verify({ brand_id: HOUSE, claim_type: 'property', claim: { property: { type: 'website', identifier: 'trailblog.example' } } });
      expect(delegated.body).toMatchObject({ verification_status: 'licensed_in', details: { relationship: 'delegated' } });
      const fake = await verify({ brand_id: 'trail_gear', claim_type: 'property', claim: { property: { type: 'website', identifier: 'fake-trail.example' } } });
      expect(fake.body.verification_status).toBe('not_ours');
    });

    test('trademark: owned, licensed in, archived, house marks, ambiguity is a correctable error', async () => {
      const us = await verify({ brand_id: 'trail_gear', claim_type: 'trademark', claim: { mark: 'Trail Gear', registry: 'uspto' } });
      expect(us.body).toMatchObject({
        verification_status: 'owned',
        details: {
          matched_registration: { registry: 'USPTO', number: '1234567', mark: 'TRAIL GEAR', registration_status: 'active' },
          countries: ['US'],
          nice_classes: [25],
        },
      });
      const fr = await verify({ brand_id: 'trail_gear', claim_type: 'trademark', claim: { mark: 'TRAIL GEAR', countries: ['FR'] } });
      expect(fr.body).toMatchObject({ verification_status: 'licensed_in', details: { licensor_domain: 'trail-eu.example' } });
      const old = await verify({ brand_id: 'trail_gear', claim_type: 'trademark', claim: { mark: 'OLD TRAIL' } });
      expect(old.body.verification_status).toBe('archived');
      const corporate = await verify({ brand_id: HOUSE, claim_type: 'trademark', claim: { mark: 'TRAIL HOLDINGS', number: '7000001' } });
      expect(corporate.body.verification_status).toBe('owned');
      const notTheLeafs = await verify({ brand_id: 'trail_gear', claim_type: 'trademark', claim: { mark: 'TRAIL HOLDINGS' } });
      expect(notTheLeafs.body.verification_status).toBe('not_ours');
      const ambiguous = await verify({ brand_id: 'trail_gear', claim_type: 'trademark', claim: { mark: 'TRAIL GEAR' } });
      expect(ambiguous.payload).toBeNull();
      expect({ code: ambiguous.body.code, field: ambiguous.body.field }).toEqual({ code: 'INVALID_REQUEST', field: 'claim.registry' });
      expect(bothVersionsErrors(schemaOf('verify_brand_claim'), ambiguous.body)).toEqual([]);
    });

    test('a brand without a brand.json has no position; an unrepresented brand is REFERENCE_NOT_FOUND; unnamed, the affirming brand answers', async () => {
      const bean = await verify({ brand_id: 'bean.example', claim_type: 'parent', claim: { parent_domain: HOUSE } });
      expect(bean.body.verification_status).toBe('unknown');
      expect(bean.payload!.brand_domain).toBe('bean.example');
      const missing = await verify({ brand_id: 'nope.example', claim_type: 'parent', claim: { parent_domain: HOUSE } });
      expect({ code: missing.body.code, field: missing.body.field }).toEqual({ code: 'REFERENCE_NOT_FOUND', field: 'brand_id' });
      expect(bothVersionsErrors(schemaOf('verify_brand_claim'), missing.body)).toEqual([]);
      const unnamed = await verify({ claim_type: 'subsidiary', claim: { subsidiary_domain: 'summit.example' }, context: { trace: 't1' } });
      expect(unnamed.body).toMatchObject({ verification_status: 'owned', context: { trace: 't1' } });
      expect(unnamed.payload!.brand_domain).toBe(HOUSE);
    });

    test('verify_brand_claims: results in order, a per-claim error, one signature over the batch bound to the caller', async () => {
      const c = await clientFor('rest', get(), TOKEN);
      const claims = [
        { claim_type: 'parent', claim: { parent_domain: HOUSE } },
        { claim_type: 'trademark', claim: { mark: 'TRAIL GEAR' } },
        { claim_type: 'property', claim: { property: { type: 'website', identifier: 'fake-trail.example' } } },
      ];
      const r = await c.call('verify_brand_claims', { brand_id: 'trail_gear', claims });
      expect(r.ok).toBe(true);
      expect(r.body.results).toEqual([
        { claim_type: 'parent', status: 'owned', details: { house_domain: HOUSE } },
        { error: expect.objectContaining({ code: 'INVALID_REQUEST', field: 'claim.registry' }) },
        { claim_type: 'property', status: 'not_ours', context_note: expect.any(String) },
      ]);
      const payload = r.body.signed_response.payload;
      expect(payload.task).toBe('verify_brand_claims');
      // The caller's identity is in the request hash: the same claims asked anonymously hash differently.
      const anonymous = await clientFor('rest', get(), null);
      const open = await anonymous.call('verify_brand_claims', { brand_id: 'trail_gear', claims });
      await checkSigned(get(), 'verify_brand_claims', open.body, { task: 'verify_brand_claims', caller_identity: 'anonymous', claims });
      expect(open.body.signed_response.payload.request_hash).not.toBe(payload.request_hash);
      expect(bothVersionsErrors(schemaOf('verify_brand_claims'), r.body)).toEqual([]);
      await c.close();
    });

    test('malformed requests are 4xx INVALID_REQUEST naming the field; nothing is signed', async () => {
      const c = await clientFor('rest', get(), TOKEN);
      const many = Array.from({ length: 101 }, () => ({ claim_type: 'parent', claim: { parent_domain: HOUSE } }));
      for (const [task, args, field] of [
        ['verify_brand_claim', { claim: { parent_domain: HOUSE } }, 'claim_type'],
        ['verify_brand_claim', { claim_type: 'brand', claim: {} }, 'claim_type'],
        ['verify_brand_claim', { claim_type: 'parent', claim: { parent_domain: 'not a domain' } }, 'claim.parent_domain'],
        ['verify_brand_claim', { claim_type: 'property', claim: { property: { type: 'website' } } }, 'claim.property.identifier'],
        ['verify_brand_claim', { claim_type: 'trademark', claim: { mark: '' } }, 'claim.mark'],
        ['verify_brand_claims', { claims: [] }, 'claims'],
        ['verify_brand_claims', { claims: many }, 'claims'],
        ['verify_brand_claims', { claims: [{ claim_type: 'subsidiary', claim: {} }] }, 'claims[0].claim.subsidiary_domain'],
      ] as const) {
        const bad = await c.call(task, args);
        expect({ task, ok: bad.ok, code: bad.body.code, field: bad.body.field }).toEqual({ task, ok: false, code: 'INVALID_REQUEST', field });
        expect(bad.body.signed_response).toBeUndefined();
        expect(bothVersionsErrors(schemaOf(task), bad.body)).toEqual([]);
      }
      const raw = await get().fetch('/tasks/verify_brand_claim', { method: 'POST', json: { claim_type: 'parent' }, token: TOKEN });
      expect(raw.status).toBe(400);
      await c.close();
    });
  },
);

// The same answers from a registry elsewhere, read over https (a TLS front on loopback) through the crawler.
forEachDatabase<{ registry: TestServer; agent: TestServer; front: ReturnType<typeof startTlsFront> }>(
  'verify_brand_claim on a brand agent reading a registry at a URL',
  async (adapter, schema) => {
    const registry = await startServer(adapter, `${schema}_r`, [
      auth({ testTokens: [{ token: TOKEN }] }),
      rateLimit(),
      registryBrands(),
      restHost({ title: 'registry' }),
    ]);
    await seedRegistry(registry);
    return { registry, ...(await brandAgentReadingRegistry(adapter, `${schema}_a`, registry, BRANDS, [{ token: TOKEN }])) };
  },
  async ({ registry, agent, front }) => {
    await agent.close();
    await registry.close();
    front.stop();
  },
  (get) => {
    test('the portfolio comes through the registry client: subsidiary, property and trademark answers, signed', async () => {
      const c = await clientFor('rest', get().agent, null);
      const claims = [
        { claim_type: 'subsidiary', claim: { subsidiary_domain: 'summit.example' } },
        { claim_type: 'property', claim: { property: { type: 'website', identifier: 'trail.example' } } },
        { claim_type: 'trademark', claim: { mark: 'TRAIL HOLDINGS' } },
        { claim_type: 'subsidiary', claim: { subsidiary_domain: 'stranger.example' } },
      ];
      const r = await c.call('verify_brand_claims', { brand_id: HOUSE, claims });
      expect(r.body.results.map((x: Body) => x.status)).toEqual(['owned', 'owned', 'owned', 'not_ours']);
      const payload = await checkSigned(get().agent, 'verify_brand_claims', r.body, { task: 'verify_brand_claims', caller_identity: 'anonymous', claims });
      expect(payload.brand_domain).toBe(HOUSE);
      await c.close();
    });
  },
);
