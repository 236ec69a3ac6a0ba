import { afterAll, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import auth from '../../plugins/auth/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryOwnership from '../../plugins/registry-ownership/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import { TEST_CERT, startPublisherWeb, tableResolver } from '../support/loopback.ts';

const web = startPublisherWeb();
afterAll(() => web.stop());
const txt: Record<string, string[][]> = {};
const OWNERSHIP_FILE = '/.well-known/proto-ownership.txt';

forEachDatabase<{ s: TestServer; clock: ManualClock }>(
  'ownership proof for community saves',
  async (adapter, schema) => {
    const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
    const s = await startServer(
      adapter,
      schema,
      [
        auth(),
        crawlerHttp({ allowlist: ['127.0.0.1'], resolver: tableResolver({ 'pub.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'], 'www.pub.test': ['127.0.0.1'] }, txt), ca: TEST_CERT }),
        registryOwnership({ origin: web.origin }),
        registryBrands(),
        registryProperties(),
        restHost(),
      ],
      { overrides: [[Clock, clock]] },
    );
    return { s, clock };
  },
  async ({ s }) => s.close(),
  (get) => {
    const s = () => get().s;
    const post = (path: string, key: string, json: unknown) => s().fetch(path, { method: 'POST', token: key, json });
    const count = async () => (await s().deployment.get(Database).query<{ n: number }>(sql`SELECT count(*)::int AS n FROM brands`))[0]!.n;

    test('a save without proof is refused and writes nothing; DNS proof then lets it through', async () => {
      const { key } = await newKey(s().deployment);
      const before = await count();
      const refused = await post('/api/brands/save', key, { domain: 'other.test', brand_name: 'Other' });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as any).error).toBe('ownership_proof_required');
      expect(await count()).toBe(before);

      const challenge = (await (await post('/api/ownership/challenge', key, { domain: 'Other.Test' })).json()) as any;
      expect(challenge.dns).toEqual({ name: '_proto-owner.other.test', type: 'TXT', value: challenge.nonce });
      expect(challenge.http.url).toBe('https://other.test/.well-known/proto-ownership.txt');
      const stored = await s().deployment.get(Database).query<{ nonce_hash: unknown }>(sql`SELECT nonce_hash FROM ownership_challenges WHERE domain = 'other.test'`);
      expect(JSON.stringify(stored)).not.toContain(challenge.nonce); // only a hash is kept

      txt['_proto-owner.other.test'] = [['unrelated=1'], [challenge.nonce]];
      const verified = (await (await post('/api/ownership/verify', key, { domain: 'other.test', method: 'dns' })).json()) as any;
      expect(verified).toMatchObject({ verified: true, domain: 'other.test', method: 'dns' });
      expect((await post('/api/brands/save', key, { domain: 'other.test', brand_name: 'Other' })).status).toBe(200);
      expect((await post('/api/brands/save', key, { domain: 'other.test', brand_name: 'Other 2' })).status).toBe(200);
      // The nonce was single use.
      expect((await post('/api/ownership/verify', key, { domain: 'other.test', method: 'dns' })).status).toBe(409);
    });

    test('HTTP proof; another organization\'s proof does not count; a failed verification kills the nonce', async () => {
      const a = await newKey(s().deployment);
      const b = await newKey(s().deployment);
      const challenge = (await (await post('/api/ownership/challenge', a.key, { domain: 'pub.test' })).json()) as any;
      web.set('pub.test', OWNERSHIP_FILE, { body: `${challenge.nonce}\n`, type: 'text/plain' });
      expect(((await (await post('/api/ownership/verify', a.key, { domain: 'pub.test', method: 'http' })).json()) as any).verified).toBe(true);
      // A's proof is A's: B creating the same (still unregistered) entry is refused for lack of its own proof.
      const byB = await post('/api/properties/save', b.key, { publisher_domain: 'pub.test', authorized_agents: [] });
      expect(byB.status).toBe(403);
      expect(((await byB.json()) as any).error).toBe('ownership_proof_required');
      expect((await post('/api/properties/save', a.key, { publisher_domain: 'pub.test', authorized_agents: [] })).status).toBe(200);

      // B asks, publishes nothing, verifies: refused, and the nonce cannot be retried.
      const bChallenge = (await (await post('/api/ownership/challenge', b.key, { domain: 'www.pub.test' })).json()) as any;
      const failed = (await (await post('/api/ownership/verify', b.key, { domain: 'www.pub.test', method: 'http' })).json()) as any;
      expect(failed.verified).toBe(false);
      expect(failed.reason).toMatch(/404|does not contain/);
      web.set('www.pub.test', OWNERSHIP_FILE, { body: bChallenge.nonce, type: 'text/plain' });
      expect((await post('/api/ownership/verify', b.key, { domain: 'www.pub.test', method: 'http' })).status).toBe(409);
    });

    test('nonces expire after 15 minutes; proofs must be renewed after 90 days to revise; admins moderate without proof', async () => {
      const { key } = await newKey(s().deployment);
      const first = (await (await post('/api/ownership/challenge', key, { domain: 'late.pub.test' })).json()) as any;
      txt['_proto-owner.late.pub.test'] = [[first.nonce]];
      get().clock.advance(15 * 60 * 1000 + 1);
      const expired = (await (await post('/api/ownership/verify', key, { domain: 'late.pub.test', method: 'dns' })).json()) as any;
      expect(expired).toMatchObject({ verified: false, reason: expect.stringMatching(/expired/) });

      const second = (await (await post('/api/ownership/challenge', key, { domain: 'late.pub.test' })).json()) as any;
      txt['_proto-owner.late.pub.test'] = [[second.nonce]];
      expect(((await (await post('/api/ownership/verify', key, { domain: 'late.pub.test', method: 'dns' })).json()) as any).verified).toBe(true);
      expect((await post('/api/brands/save', key, { domain: 'late.pub.test', brand_name: 'Late' })).status).toBe(200);
      get().clock.advance(91 * 86_400_000);
      const stale = await post('/api/brands/save', key, { domain: 'late.pub.test', brand_name: 'Later' });
      expect(stale.status).toBe(403);
      expect(((await stale.json()) as any).message).toMatch(/older than 90 days/);
      expect((await post('/api/brands/late.pub.test/rollback', key, { to_revision: 1 })).status).toBe(403);

      const admin = await newKey(s().deployment, 'admin');
      expect((await post('/api/brands/save', admin.key, { domain: 'late.pub.test', brand_name: 'Moderated' })).status).toBe(200);
    });
  },
);
