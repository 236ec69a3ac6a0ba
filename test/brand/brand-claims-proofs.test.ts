import { expect, test } from 'bun:test';
import { Database } from '../../core/ports/database.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import crawlerHttp, { type Resolver } from '../../plugins/crawler-http/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryOwnership from '../../plugins/registry-ownership/index.ts';
import brandAgent from '../../plugins/brand-agent/index.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import restHost from '../../hosts/rest/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import type { startTlsFront } from '../support/tls-front.ts';
import { forEachDatabase } from '../support/db.ts';
import { clientFor, type Body } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { newKey } from '../support/principals.ts';
import { brandAgentReadingRegistry, checkSigned, schemaOf } from '../support/brand-claims.ts';

// verify_brand_claim(s) weighed against the registry's proofs of domain control (registry-ownership).
const HOUSE = 'acme.example';
const BRANDS = [
  { domain: HOUSE },
  { domain: 'kids-acme.example' },
  { domain: 'pets-acme.example' },
  { domain: 'crawled.example' },
  { domain: 'orphan.example' },
];
const site = (identifier: string, relationship?: string) => ({ type: 'website', identifier, ...(relationship ? { relationship } : {}) });

const PORTFOLIO = {
  house: { domain: HOUSE, name: 'Acme' },
  brands: [
    {
      id: 'acme',
      url: `https://${HOUSE}`,
      names: [{ en: 'Acme' }],
      properties: [site(HOUSE), site('shop-acme.example'), site('contested.example'), site('plain-acme.example'), site('partner.example', 'delegated')],
    },
    { id: 'acme_kids', url: 'https://kids-acme.example', names: [{ en: 'Acme Kids' }] },
    { id: 'acme_pets', url: 'https://pets-acme.example', names: [{ en: 'Acme Pets' }] },
  ],
};
/** A brand.json no organization's entry holds: those proven for the brand's own domain stand in. */
const crawled = (domain: string, sites: string[]) => ({
  house: { domain, name: domain },
  brands: [{ id: domain.split('.')[0], url: `https://${domain}`, names: [{ en: domain }], properties: sites.map((s) => site(s)) }],
});

/** DNS TXT answers of every deployment here; proofs are published into it. */
const txt: Record<string, string[][]> = {};
const resolver: Resolver = {
  lookup: async (host) => Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })),
  resolveTxt: async (name) => txt[name] ?? Promise.reject(Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' })),
};

interface Orgs {
  /** Holds the house's community entry (and proves its domains). */
  holder: { key: string; orgId: string; orgName: string };
  /** Proves domains the brands list. */
  other: { key: string; orgId: string; orgName: string };
}

async function prove(server: TestServer, key: string, domain: string): Promise<void> {
  const post = (path: string) => server.fetch(path, { method: 'POST', token: key, json: { domain, ...(path.endsWith('verify') ? { method: 'dns' } : {}) } });
  const challenge = (await (await post('/api/ownership/challenge')).json()) as { dns: { name: string; value: string } };
  txt[challenge.dns.name] = [[challenge.dns.value]];
  const verified = await post('/api/ownership/verify');
  if (verified.status !== 200) throw new Error(`proof of ${domain} failed: ${await verified.text()}`);
}

/** The registry: the house entry created by `holder` (with proof), then its brand.json crawled; proofs by both organizations. */
async function seedRegistry(server: TestServer): Promise<Orgs> {
  const holder = await newKey(server.deployment);
  const other = await newKey(server.deployment);
  const third = await newKey(server.deployment);
  await prove(server, holder.key, HOUSE);
  const saved = await server.fetch('/api/brands/save', { method: 'POST', token: holder.key, json: { domain: HOUSE, brand_name: 'Acme' } });
  if (!saved.ok) throw new Error(`save failed: ${await saved.text()}`);
  for (const d of ['shop-acme.example', 'kids-acme.example']) await prove(server, holder.key, d);
  for (const d of ['contested.example', 'pets-acme.example', 'partner.example', 'stranger.example', 'crawled-taken.example', 'orphan-shop.example'])
    await prove(server, other.key, d);
  for (const d of ['crawled.example', 'crawled-shop.example']) await prove(server, third.key, d);
  const records = server.deployment.get(BrandJsonRecords);
  await server.deployment.get(Database).transaction(async (tx) => {
    await records.record(tx, HOUSE, PORTFOLIO);
    await records.record(tx, 'kids-acme.example', { house: HOUSE });
    await records.record(tx, 'pets-acme.example', { house: HOUSE });
    await records.record(tx, 'crawled.example', crawled('crawled.example', ['crawled-shop.example', 'crawled-taken.example']));
    await records.record(tx, 'orphan.example', crawled('orphan.example', ['orphan-shop.example']));
  });
  return { holder, other };
}

const START = new Date('2026-06-01T00:00:00Z');
const evidence = (domain: string) => ({ type: 'registry_domain_control', domain, verification_method: 'dns', verified_at: START.toISOString() });

forEachDatabase<{ server: TestServer; clock: ManualClock; orgs: Orgs }>(
  'verify_brand_claim(s) weighed against proofs of domain control',
  async (adapter, schema) => {
    const clock = new ManualClock(START);
    const server = await startServer(
      adapter,
      schema,
      [
        auth(),
        crawlerHttp({ resolver }),
        rateLimit(),
        registryOwnership({ pruneIntervalMs: 0 }),
        registryBrands(),
        restHost({ title: 'brand' }),
        signerKeyring(),
        tasks({ worker: false }),
        idempotency(),
        brandAgent({ brands: BRANDS }),
        restTasks(),
      ],
      { env: { PROTOCOL_NAMESPACE: 'adcp' }, overrides: [[Clock, clock]] },
    );
    return { server, clock, orgs: await seedRegistry(server) };
  },
  ({ server }) => server.close(),
  (get) => {
    /** One claim, anonymously; the answer validates (both versions) and its signed_response verifies. */
    const verify = async (args: Record<string, any>) => {
      const c = await clientFor('rest', get().server, null);
      const r = await c.call('verify_brand_claim', args);
      expect(r.ok).toBe(true);
      const binding = { task: 'verify_brand_claim', caller_identity: 'anonymous', claim_type: args.claim_type, claim: args.claim };
      const payload = await checkSigned(get().server, 'verify_brand_claim', r.body, binding);
      expect(payload.response.verification_status).toBe(r.body.verification_status);
      return r.body;
    };
    const property = (brand_id: string, identifier: string) => verify({ brand_id, claim_type: 'property', claim: { property: site(identifier) } });
    /** No registrant is named: neither organization's id nor its name appears in an answer. */
    const namesNoRegistrant = (body: Body) => {
      const text = JSON.stringify(body);
      for (const org of [get().orgs.holder, get().orgs.other]) {
        expect(text).not.toContain(org.orgId);
        expect(text).not.toContain(org.orgName);
      }
    };

    test("the brand's holder has proven the domain: owned, with the proof as evidence (website, subsidiary, parent)", async () => {
      for (const identifier of ['shop-acme.example', 'www.Shop-Acme.example']) {
        const shop = await property(HOUSE, identifier);
        expect(shop).toMatchObject({
          verification_status: 'owned',
          details: { relationship: 'owned', brand_id: 'acme', evidence: evidence('shop-acme.example') },
        });
        namesNoRegistrant(shop);
      }
      const kids = await verify({ brand_id: HOUSE, claim_type: 'subsidiary', claim: { subsidiary_domain: 'kids-acme.example' } });
      expect(kids).toMatchObject({ verification_status: 'owned', details: { brand_id: 'acme_kids', evidence: evidence('kids-acme.example') } });
      // kids-acme.example's entry has no holding organization: the holder proved its domain, and the house's.
      const parent = await verify({ brand_id: 'kids-acme.example', claim_type: 'parent', claim: { parent_domain: HOUSE } });
      expect(parent).toMatchObject({ verification_status: 'owned', details: { house_domain: HOUSE, evidence: evidence(HOUSE) } });
      // A crawled brand.json with no holder: the organization that proved the brand's own domain stands in.
      const crawledShop = await property('crawled.example', 'crawled-shop.example');
      expect(crawledShop).toMatchObject({ verification_status: 'owned', details: { evidence: evidence('crawled-shop.example') } });
    });

    test('another organization has proven a website: disputed, with a note naming no registrant', async () => {
      const contested = await property(HOUSE, 'contested.example');
      expect(contested).toMatchObject({ verification_status: 'disputed', details: { relationship: 'owned', brand_id: 'acme' } });
      expect(contested.context_note).toContain('contested.example is proven in the registry by a different registrant');
      expect(contested.details.evidence).toBeUndefined();
      namesNoRegistrant(contested);
      expect((await property('crawled.example', 'crawled-taken.example')).verification_status).toBe('disputed');
    });

    test("another organization has proven a subsidiary's or parent's domain: still owned (a house and its brands may register apart), no evidence", async () => {
      const pets = await verify({ brand_id: HOUSE, claim_type: 'subsidiary', claim: { subsidiary_domain: 'pets-acme.example' } });
      expect(pets).toMatchObject({ verification_status: 'owned', details: { brand_id: 'acme_pets' } });
      expect(pets.details.evidence).toBeUndefined();
      // pets-acme.example's domain is the other organization's; the house it names was proven by the holder.
      const parent = await verify({ brand_id: 'pets-acme.example', claim_type: 'parent', claim: { parent_domain: HOUSE } });
      expect(parent).toMatchObject({ verification_status: 'owned', details: { house_domain: HOUSE } });
      expect(parent.details.evidence).toBeUndefined();
      expect(parent.context_note).toBeUndefined();
    });

    test('no proof, no holder, or an answer that is not owned: the brand.json answer stands', async () => {
      expect(await property(HOUSE, 'plain-acme.example')).toMatchObject({
        verification_status: 'owned',
        details: { relationship: 'owned', brand_id: 'acme' },
      });
      expect((await property(HOUSE, 'plain-acme.example')).details.evidence).toBeUndefined();
      // A delegated site is someone else's: its owner's proof changes nothing.
      expect(await property(HOUSE, 'partner.example')).toMatchObject({ verification_status: 'licensed_in', details: { relationship: 'delegated' } });
      expect((await property(HOUSE, 'stranger.example')).verification_status).toBe('not_ours');
      // Nobody holds orphan.example's entry or has proven its domain: proofs of its sites decide nothing.
      const orphan = await property('orphan.example', 'orphan-shop.example');
      expect(orphan.verification_status).toBe('owned');
      expect(orphan.details.evidence).toBeUndefined();
      // Not a website, or an identifier that is no domain: nothing to prove.
      const app = await verify({ brand_id: HOUSE, claim_type: 'property', claim: { property: { type: 'mobile_app', identifier: 'contested.example' } } });
      expect(app.verification_status).toBe('not_ours');
      expect((await property(HOUSE, 'http://[::1]/shop')).verification_status).toBe('not_ours');
    });

    test('verify_brand_claims: every result weighed, one signature over the batch; malformed input is 400 and unsigned', async () => {
      const c = await clientFor('rest', get().server, null);
      const claims = [
        { claim_type: 'property', claim: { property: site('shop-acme.example') } },
        { claim_type: 'property', claim: { property: site('contested.example') } },
        { claim_type: 'property', claim: { property: site('plain-acme.example') } },
        { claim_type: 'subsidiary', claim: { subsidiary_domain: 'pets-acme.example' } },
      ];
      const r = await c.call('verify_brand_claims', { brand_id: HOUSE, claims });
      expect(r.body.results).toEqual([
        { claim_type: 'property', status: 'owned', details: { relationship: 'owned', brand_id: 'acme', evidence: evidence('shop-acme.example') } },
        { claim_type: 'property', status: 'disputed', details: { relationship: 'owned', brand_id: 'acme' }, context_note: expect.any(String) },
        { claim_type: 'property', status: 'owned', details: { relationship: 'owned', brand_id: 'acme' } },
        { claim_type: 'subsidiary', status: 'owned', details: { brand_id: 'acme_pets' } },
      ]);
      await checkSigned(get().server, 'verify_brand_claims', r.body, { task: 'verify_brand_claims', caller_identity: 'anonymous', claims });
      for (const [task, args, field] of [
        ['verify_brand_claim', { claim_type: 'property', claim: { property: { type: 'website', identifier: '' } } }, 'claim.property.identifier'],
        ['verify_brand_claims', { claims: [{ claim_type: 'subsidiary', claim: { subsidiary_domain: 'not a domain' } }] }, 'claims[0].claim.subsidiary_domain'],
      ] as const) {
        const bad = await get().server.fetch(`/tasks/${task}`, { method: 'POST', json: args });
        expect(bad.status).toBe(400);
        const body = (await bad.json()) as Body;
        expect({ code: body.code, field: body.field, signed: body.signed_response }).toEqual({ code: 'INVALID_REQUEST', field, signed: undefined });
        expect(bothVersionsErrors(schemaOf(task), body)).toEqual([]);
      }
      await c.close();
    });

    // Last: it moves the clock past every proof's re-proof window.
    test('a proof older than the re-proof window no longer counts', async () => {
      get().clock.advance(91 * 86_400_000);
      const shop = await property(HOUSE, 'shop-acme.example');
      expect(shop.verification_status).toBe('owned');
      expect(shop.details.evidence).toBeUndefined();
      expect((await property(HOUSE, 'contested.example')).verification_status).toBe('owned');
    });
  },
);

// A brand agent without the registry in its deployment reads one at a URL: answers come from brand.json alone.
forEachDatabase<{ registry: TestServer; agent: TestServer; front: ReturnType<typeof startTlsFront> }>(
  'verify_brand_claim on a brand agent without the registry',
  async (adapter, schema) => {
    const registry = await startServer(
      adapter,
      `${schema}_r`,
      [auth(), crawlerHttp({ resolver }), rateLimit(), registryOwnership({ pruneIntervalMs: 0 }), registryBrands(), restHost({ title: 'registry' })],
      { overrides: [[Clock, new ManualClock(START)]] },
    );
    await seedRegistry(registry);
    return { registry, ...(await brandAgentReadingRegistry(adapter, `${schema}_a`, registry, BRANDS)) };
  },
  async ({ registry, agent, front }) => {
    await agent.close();
    await registry.close();
    front.stop();
  },
  (get) => {
    test('proofs elsewhere change nothing: owned without evidence, signed', async () => {
      const c = await clientFor('rest', get().agent, null);
      const claims = [
        { claim_type: 'property', claim: { property: site('shop-acme.example') } },
        { claim_type: 'property', claim: { property: site('contested.example') } },
      ];
      const r = await c.call('verify_brand_claims', { brand_id: HOUSE, claims });
      expect(r.body.results).toEqual([
        { claim_type: 'property', status: 'owned', details: { relationship: 'owned', brand_id: 'acme' } },
        { claim_type: 'property', status: 'owned', details: { relationship: 'owned', brand_id: 'acme' } },
      ]);
      await checkSigned(get().agent, 'verify_brand_claims', r.body, { task: 'verify_brand_claims', caller_identity: 'anonymous', claims });
      await c.close();
    });
  },
);
