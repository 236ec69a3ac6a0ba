import { expect, test } from 'bun:test';
import { Database } from '../../core/ports/database.ts';
import { BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import brandAgent from '../../plugins/brand-agent/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import restHost from '../../hosts/rest/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import mcpHost from '../../hosts/mcp/index.ts';
import a2aHost from '../../hosts/a2a/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { clientFor, HOSTS } from '../support/agent.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { newKey } from '../support/principals.ts';
import { loopbackResolver, TEST_CERT } from '../support/loopback.ts';
import { startTlsFront } from '../support/tls-front.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

const TOKEN = 'brand-agent-test-token-0123456789';
const BRANDS = [{ domain: 'trail.example', brand_id: 'trail_gear' }, { domain: 'bean.example' }, { domain: 'unlisted.example' }];

const TRAIL_BRAND_JSON = {
  house: { domain: 'trail-holdings.example', name: 'Trail Holdings' },
  brands: [
    {
      id: 'trail_gear',
      url: 'https://trail.example',
      names: [{ en: 'Trail Gear' }],
      keller_type: 'endorsed',
      industries: ['retail'],
      logos: [{ url: 'https://trail.example/logo.png', orientation: 'square', variant: 'bogus-variant' }, { url: 'javascript:alert(1)' }],
      colors: { primary: '#112233', secondary: ['#445566'], accent: 'red' },
      fonts: { primary: { family: 'Inter', files: [{ url: 'https://trail.example/inter.woff2' }] } },
      tone: { voice: 'Plain', dos: ['Be brief'] },
      tagline: 'Go further',
    },
  ],
};

/** Registry data: a brand.json brand and a community entry with a manifest. */
async function seedRegistry(server: TestServer): Promise<void> {
  const records = server.deployment.get(BrandJsonRecords);
  await server.deployment.get(Database).transaction((tx) => records.record(tx, 'trail.example', TRAIL_BRAND_JSON));
  const { key } = await newKey(server.deployment);
  const saved = await server.fetch('/api/brands/save', {
    method: 'POST',
    token: key,
    json: {
      domain: 'bean.example',
      brand_name: 'Bean Roasters',
      brand_manifest: { description: 'Coffee', colors: [{ hex: '#3e2723', type: 'primary' }], logos: [{ url: 'https://bean.example/l.png' }] },
    },
  });
  if (!saved.ok) throw new Error(`save failed: ${await saved.text()}`);
}

const registryPlugins = () => [auth({ testTokens: [{ token: TOKEN }] }), rateLimit(), registryBrands(), restHost({ title: 'registry' })];
const agentPlugins = (brandOptions: Parameters<typeof brandAgent>[0]) => [
  tasks({ worker: false }),
  idempotency(),
  brandAgent(brandOptions),
  restTasks(),
  mcpHost(),
  a2aHost(),
];

function identityAssertions(get: () => TestServer, label: string) {
  for (const host of HOSTS) {
    test(`${label} ${host}: brand.json and community brands, public and authenticated sections, both versions`, async () => {
      const c = await clientFor(host, get(), TOKEN);
      const args = { brand_id: 'trail_gear' };
      expect(bothVersionsErrors('brand/get-brand-identity-request.json', args)).toEqual([]);
      const trail = await c.call('get_brand_identity', args);
      expect(trail.ok).toBe(true);
      expect(bothVersionsErrors('brand/get-brand-identity-response.json', trail.body)).toEqual([]);
      expect(trail.body).toMatchObject({
        brand_id: 'trail_gear',
        house: { domain: 'trail-holdings.example', name: 'Trail Holdings' },
        names: [{ en: 'Trail Gear' }],
        keller_type: 'endorsed',
        // Untrusted members are dropped: an unknown logo variant, a javascript: logo, a colour that is no hex.
        logos: [{ url: 'https://trail.example/logo.png', orientation: 'square' }],
        colors: { primary: '#112233', secondary: '#445566' },
        fonts: { primary: { family: 'Inter' } },
        tone: { voice: 'Plain', dos: ['Be brief'] },
        tagline: 'Go further',
      });
      expect(trail.body.available_fields).toBeUndefined();

      const bean = await c.call('get_brand_identity', { brand_id: 'bean.example', fields: ['colors', 'logos', 'description'] });
      expect(bothVersionsErrors('brand/get-brand-identity-response.json', bean.body)).toEqual([]);
      expect(bean.body).toEqual(
        expect.objectContaining({
          brand_id: 'bean.example',
          house: { domain: 'bean.example', name: 'Bean Roasters' },
          names: [{ en: 'Bean Roasters' }],
          colors: { primary: '#3E2723' },
          logos: [{ url: 'https://bean.example/l.png' }],
          description: 'Coffee',
        }),
      );
      expect(bean.body.tagline).toBeUndefined();

      // Without a credential: public sections only; the others are named in available_fields.
      const anonymous = await clientFor(host, get(), null);
      const open = await anonymous.call('get_brand_identity', { brand_id: 'trail_gear' });
      expect(bothVersionsErrors('brand/get-brand-identity-response.json', open.body)).toEqual([]);
      expect(open.body.fonts).toBeUndefined();
      expect(open.body.available_fields.sort()).toEqual(['fonts', 'tone']);

      for (const [brand_id, field] of [
        ['acme.example', 'brand_id'],
        ['unlisted.example', 'brand_id'],
      ]) {
        const missing = await c.call('get_brand_identity', { brand_id });
        expect({ ok: missing.ok, code: missing.body.code, field: missing.body.field }).toEqual({ ok: false, code: 'REFERENCE_NOT_FOUND', field });
        expect(bothVersionsErrors('brand/get-brand-identity-response.json', missing.body)).toEqual([]);
      }
      for (const [args, field] of [
        [{}, 'brand_id'],
        [{ brand_id: 'trail_gear', fields: [] }, 'fields'],
        [{ brand_id: 'trail_gear', fields: ['logo'] }, 'fields[0]'],
      ] as const) {
        const bad = await c.call('get_brand_identity', args);
        expect({ code: bad.body.code, field: bad.body.field }).toEqual({ code: 'INVALID_REQUEST', field });
      }
      await c.close();
      await anonymous.close();
    });
  }
}

forEachDatabase<TestServer>(
  'brand agent on the registry of its deployment',
  async (adapter, schema) => {
    const server = await startServer(adapter, schema, [...registryPlugins(), ...agentPlugins({ brands: BRANDS })], { env: { PROTOCOL_NAMESPACE: 'adcp' } });
    await seedRegistry(server);
    return server;
  },
  (s) => s.close(),
  (get) => identityAssertions(get, 'local'),
);

// A registry elsewhere, reached over https (a TLS front on loopback) through the SSRF-guarded crawler.
forEachDatabase<{ registry: TestServer; agent: TestServer; front: ReturnType<typeof startTlsFront> }>(
  'brand agent reading a registry at a URL',
  async (adapter, schema) => {
    const registry = await startServer(adapter, `${schema}_r`, registryPlugins());
    await seedRegistry(registry);
    const front = startTlsFront();
    front.route('registry.pub.test', registry.base);
    const agent = await startServer(
      adapter,
      `${schema}_a`,
      [
        auth({ testTokens: [{ token: TOKEN }] }),
        crawlerHttp({ resolver: loopbackResolver(['pub.test']), ca: TEST_CERT, allowlist: ['127.0.0.1'] }),
        ...agentPlugins({ brands: BRANDS, registryUrl: front.url('registry.pub.test') }),
      ],
      { env: { PROTOCOL_NAMESPACE: 'adcp' } },
    );
    return { registry, agent, front };
  },
  async ({ registry, agent, front }) => {
    await agent.close();
    await registry.close();
    front.stop();
  },
  (get) => {
    identityAssertions(() => get().agent, 'remote');
    test('an unreachable registry is SERVICE_UNAVAILABLE (transient)', async () => {
      get().front.route('registry.pub.test', () => new Response('down', { status: 503, headers: { 'content-type': 'text/plain' } }));
      const c = await clientFor('rest', get().agent, TOKEN);
      const down = await c.call('get_brand_identity', { brand_id: 'trail_gear' });
      expect({ code: down.body.code, recovery: down.body.errors[0].recovery }).toEqual({ code: 'SERVICE_UNAVAILABLE', recovery: 'transient' });
      get().front.route('registry.pub.test', get().registry.base);
    });
  },
);
