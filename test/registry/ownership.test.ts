import { afterAll, expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import auth from '../../plugins/auth/index.ts';
import crawlerHttp, { type Resolver } from '../../plugins/crawler-http/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import registryOwnership from '../../plugins/registry-ownership/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import { TEST_CERT, startPublisherWeb } from '../support/loopback.ts';

const web = startPublisherWeb();
afterAll(() => web.stop());
const FILE = '/.well-known/proto-ownership.txt';
const MINUTE = 60_000;
const DAY = 86_400_000;

/** Names under pub.test / other.test reach the loopback TLS server; TXT answers come from `txt`. */
const txt: Record<string, string[][]> = {};
const resolver: Resolver = {
  async lookup(host) {
    if (host === 'intranet.pub.test') return ['10.1.2.3'];
    if (/(^|\.)(pub|other)\.test$/.test(host)) return ['127.0.0.1'];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  },
  async resolveTxt(name) {
    if (name === '_proto-owner.servfail.pub.test') throw Object.assign(new Error(`queryTxt ESERVFAIL ${name}`), { code: 'ESERVFAIL' });
    const records = txt[name];
    if (!records) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return records;
  },
};

forEachDatabase<{ s: TestServer; clock: ManualClock }>(
  'ownership proof for community saves',
  async (adapter, schema) => {
    const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
    const s = await startServer(
      adapter,
      schema,
      [
        auth(),
        crawlerHttp({ allowlist: ['127.0.0.1'], resolver, ca: TEST_CERT }),
        rateLimit({ pruneIntervalMs: 0 }),
        // A 10-minute rate window (shorter than a nonce's life) lets one test see a refused attempt leave the nonce alive.
        registryOwnership({ origin: web.origin, verifyLimit: { limit: 10, windowSeconds: 600 }, pruneIntervalMs: 0 }),
        registryBrands(),
        registryProperties(),
        registryFeed({ sequenceIntervalMs: 0, retentionIntervalMs: 0 }),
        restHost(),
      ],
      { overrides: [[Clock, clock]] },
    );
    return { s, clock };
  },
  async ({ s }) => s.close(),
  (get) => {
    const s = () => get().s;
    const clock = () => get().clock;
    const db = () => s().deployment.get(Database);
    const post = (path: string, key: string, json: unknown) => s().fetch(path, { method: 'POST', token: key, json });
    const challenge = async (key: string, domain: string) => {
      const res = await post('/api/ownership/challenge', key, { domain });
      expect(res.status).toBe(200);
      return (await res.json()) as {
        domain: string;
        nonce: string;
        expires_at: string;
        dns: { name: string; value: string };
        http: { url: string; body: string };
      };
    };
    const verify = (key: string, domain: string, method: 'dns' | 'http') => post('/api/ownership/verify', key, { domain, method });
    const saveBrand = (key: string, domain: string, brand_name = 'Brand') => post('/api/brands/save', key, { domain, brand_name });
    /** Rows anywhere a save writes: entries, revisions, feed events. */
    const written = async () => {
      const [r] = await db().query<Record<string, number>>(sql`SELECT
        (SELECT count(*)::int FROM brands) AS brands, (SELECT count(*)::int FROM brand_revisions) AS brand_revisions,
        (SELECT count(*)::int FROM property_entries) AS properties, (SELECT count(*)::int FROM property_revisions) AS property_revisions,
        (SELECT count(*)::int FROM registry_event_staging) + (SELECT count(*)::int FROM registry_events) AS events`);
      return r!;
    };
    /** Prove control of `domain` for the key's organization over DNS. */
    const prove = async (key: string, domain: string) => {
      const c = await challenge(key, domain);
      txt[c.dns.name] = [[c.dns.value]];
      const res = await verify(key, domain, 'dns');
      expect(res.status).toBe(200);
      return (await res.json()) as { proven_at: string; valid_until: string };
    };

    test('challenge: the answer says where to publish; only a hash of the nonce is stored', async () => {
      const { key } = await newKey(s().deployment);
      const c = await challenge(key, 'HTTPS://Shape.Pub.Test/path');
      expect(c.domain).toBe('shape.pub.test');
      expect(c.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(new Date(c.expires_at).getTime() - clock().now().getTime()).toBe(15 * MINUTE);
      expect(c.dns).toEqual({ name: '_proto-owner.shape.pub.test', type: 'TXT', value: c.nonce } as any);
      expect(c.http).toEqual({ url: `https://shape.pub.test:${web.port}${FILE}`, body: c.nonce });
      const stored = await db().query<Record<string, unknown>>(sql`SELECT * FROM ownership_challenges WHERE domain = 'shape.pub.test'`);
      expect(stored.length).toBe(1);
      expect(JSON.stringify(stored)).not.toContain(c.nonce);
      expect(Buffer.from(stored[0]!.nonce_hash as Uint8Array).toString('hex')).toBe(new Bun.CryptoHasher('sha256').update(c.nonce).digest('hex'));
    });

    test('a save without proof is refused with 403 ownership_proof_required and writes nothing; after a DNS proof it goes through', async () => {
      const { key } = await newKey(s().deployment);
      const before = await written();
      const refused = await saveBrand(key, 'dns.pub.test');
      expect(refused.status).toBe(403);
      const body = (await refused.json()) as any;
      expect(body.error).toBe('ownership_proof_required');
      expect(body.message).toContain('POST /api/ownership/challenge');
      expect(body.message).toContain('has not proven control of dns.pub.test');
      const refusedProperty = await post('/api/properties/save', key, { publisher_domain: 'dns.pub.test', authorized_agents: [] });
      expect(refusedProperty.status).toBe(403);
      expect(await written()).toEqual(before);

      const c = await challenge(key, 'dns.pub.test');
      txt['_proto-owner.dns.pub.test'] = [['v=spf1 -all'], [`proto-owner=${c.nonce}`]];
      const ok = await verify(key, 'dns.pub.test', 'dns');
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({
        verified: true,
        domain: 'dns.pub.test',
        method: 'dns',
        proven_at: clock().now().toISOString(),
        valid_until: new Date(clock().now().getTime() + 90 * DAY).toISOString(),
      });
      expect((await saveBrand(key, 'dns.pub.test')).status).toBe(200);
      expect((await saveBrand(key, 'dns.pub.test', 'Renamed')).status).toBe(200);
      expect((await post('/api/properties/save', key, { publisher_domain: 'dns.pub.test', authorized_agents: [] })).status).toBe(200);

      const status = (await (await s().fetch('/api/ownership/status?domain=dns.pub.test', { token: key })).json()) as any;
      expect(status).toMatchObject({ proof_required: true, proof: { method: 'dns', current: true }, challenge: { status: 'consumed', method: 'dns' } });
    });

    test('a nonce is single use', async () => {
      const { key } = await newKey(s().deployment);
      await prove(key, 'once.pub.test');
      const again = await verify(key, 'once.pub.test', 'dns');
      expect(again.status).toBe(409);
      const body = (await again.json()) as any;
      expect(body.error).toBe('no_challenge');
      expect(body.message).toMatch(/already used.*single use/);
      expect(body.details.challenge.status).toBe('consumed');
    });

    test('two verifications of one nonce at once: exactly one succeeds', async () => {
      const { key } = await newKey(s().deployment);
      const c = await challenge(key, 'race.pub.test');
      txt[c.dns.name] = [[c.nonce]];
      const statuses = (await Promise.all(Array.from({ length: 4 }, () => verify(key, 'race.pub.test', 'dns')))).map((r) => r.status);
      expect(statuses.filter((x) => x === 200).length).toBe(1);
      expect(statuses.filter((x) => x === 409).length).toBe(3);
    });

    test("HTTP proof from the well-known file over TLS; another organization's proof does not count", async () => {
      const a = await newKey(s().deployment);
      const b = await newKey(s().deployment);
      const c = await challenge(a.key, 'other.test');
      web.set('other.test', FILE, { body: `# ownership proof\n${c.http.body}\n`, type: 'text/plain' });
      const ok = await verify(a.key, 'other.test', 'http');
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as any).method).toBe('http');

      // B neither proved nor may borrow A's proof: creating the (still unregistered) entry is refused.
      const byB = await post('/api/properties/save', b.key, { publisher_domain: 'other.test', authorized_agents: [] });
      expect(byB.status).toBe(403);
      expect(((await byB.json()) as any).error).toBe('ownership_proof_required');
      // Nor can B verify with the nonce A published: B has no challenge, and B's own nonce is different.
      expect((await verify(b.key, 'other.test', 'http')).status).toBe(409);
      await challenge(b.key, 'other.test');
      const borrowed = await verify(b.key, 'other.test', 'http');
      expect(borrowed.status).toBe(422);
      expect(((await borrowed.json()) as any).reason).toBe('http_body_mismatch');
      expect((await post('/api/properties/save', a.key, { publisher_domain: 'other.test', authorized_agents: [] })).status).toBe(200);
    });

    test('a failed verification says why and invalidates the nonce: publishing it afterwards does not help', async () => {
      const { key } = await newKey(s().deployment);
      web.remove('late-file.pub.test', FILE); // the server is shared by both adapters' runs
      const c = await challenge(key, 'late-file.pub.test');
      const failed = await verify(key, 'late-file.pub.test', 'http');
      expect(failed.status).toBe(422);
      const body = (await failed.json()) as any;
      expect(body).toMatchObject({ error: 'ownership_not_verified', reason: 'http_status', details: { status: 404 } });
      expect(body.message).toContain('answered HTTP 404');
      expect(body.message).toContain('The nonce is now invalid');
      web.set('late-file.pub.test', FILE, { body: c.nonce, type: 'text/plain' });
      const retry = await verify(key, 'late-file.pub.test', 'http');
      expect(retry.status).toBe(409);
      const retryBody = (await retry.json()) as any;
      expect(retryBody.message).toContain('invalidated by a failed verification');
      expect(retryBody.details.challenge).toMatchObject({ status: 'invalidated', failure: 'http_status' });
      // A new nonce works.
      const next = await challenge(key, 'late-file.pub.test');
      web.set('late-file.pub.test', FILE, { body: next.nonce, type: 'text/plain' });
      expect((await verify(key, 'late-file.pub.test', 'http')).status).toBe(200);
    });

    test('every failure names its reason', async () => {
      const { key } = await newKey(s().deployment);
      const reasonOf = async (domain: string, method: 'dns' | 'http', setup: (nonce: string) => void = () => {}) => {
        const c = await challenge(key, domain);
        setup(c.nonce);
        const res = await verify(key, domain, method);
        expect(res.status).toBe(422);
        return (await res.json()) as any;
      };
      expect((await reasonOf('nodns.pub.test', 'dns')).reason).toBe('dns_record_missing');
      const mismatch = await reasonOf('wrongdns.pub.test', 'dns', () => (txt['_proto-owner.wrongdns.pub.test'] = [['something-else']]));
      expect(mismatch).toMatchObject({ reason: 'dns_record_mismatch', details: { records: ['something-else'] } });
      expect((await reasonOf('servfail.pub.test', 'dns')).reason).toBe('dns_lookup_failed');
      const wrongBody = await reasonOf('wrongfile.pub.test', 'http', () => web.set('wrongfile.pub.test', FILE, { body: 'hello', type: 'text/plain' }));
      expect(wrongBody).toMatchObject({ reason: 'http_body_mismatch', details: { body_preview: 'hello' } });
      // The SSRF guard applies: a name resolving to a private address is never fetched.
      const blocked = await reasonOf('intranet.pub.test', 'http');
      expect(blocked).toMatchObject({ reason: 'http_fetch_failed', details: { crawler_error: 'ssrf_blocked' } });
      expect((await reasonOf('unknown.invalid-tld.example', 'http')).details.crawler_error).toBe('dns_failed');
    });

    test('a new challenge supersedes the old one; publishing the old nonce fails and says so', async () => {
      const { key } = await newKey(s().deployment);
      const first = await challenge(key, 'twice.pub.test');
      await challenge(key, 'twice.pub.test');
      const rows = await db().query<{ status: string }>(sql`SELECT status FROM ownership_challenges WHERE domain = 'twice.pub.test' ORDER BY issued_at, id`);
      expect(rows.map((r) => r.status)).toEqual(['superseded', 'issued']);
      txt['_proto-owner.twice.pub.test'] = [[first.nonce]];
      const res = await verify(key, 'twice.pub.test', 'dns');
      expect(res.status).toBe(422);
      const body = (await res.json()) as any;
      expect(body.details.outdated_nonce).toBe(true);
      expect(body.message).toContain('earlier nonce');
    });

    test('nonces expire after 15 minutes and are dead from then on', async () => {
      const { key } = await newKey(s().deployment);
      const inTime = await challenge(key, 'intime.pub.test');
      txt[inTime.dns.name] = [[inTime.nonce]];
      clock().advance(15 * MINUTE - 1000);
      expect((await verify(key, 'intime.pub.test', 'dns')).status).toBe(200);

      const late = await challenge(key, 'late.pub.test');
      txt[late.dns.name] = [[late.nonce]];
      clock().advance(15 * MINUTE);
      const expired = await verify(key, 'late.pub.test', 'dns');
      expect(expired.status).toBe(410);
      const body = (await expired.json()) as any;
      expect(body.error).toBe('challenge_expired');
      expect(body.message).toContain(late.expires_at);
      expect((await verify(key, 'late.pub.test', 'dns')).status).toBe(410);
      const [row] = await db().query<{ status: string }>(sql`SELECT status FROM ownership_challenges WHERE domain = 'late.pub.test'`);
      expect(row!.status).toBe('expired');
    });

    test('proofs last a rolling 90 days: revisions and rollbacks need a fresh one', async () => {
      const { key } = await newKey(s().deployment);
      await prove(key, 'rolling.pub.test');
      expect((await saveBrand(key, 'rolling.pub.test', 'One')).status).toBe(200);
      clock().advance(89 * DAY);
      expect((await saveBrand(key, 'rolling.pub.test', 'Two')).status).toBe(200);
      clock().advance(2 * DAY);
      const before = await written();
      const stale = await saveBrand(key, 'rolling.pub.test', 'Three');
      expect(stale.status).toBe(403);
      const body = (await stale.json()) as any;
      expect(body.error).toBe('ownership_proof_required');
      expect(body.message).toMatch(/older than 90 days/);
      const rollback = await post('/api/brands/rolling.pub.test/rollback', key, { to_revision: 1 });
      expect(rollback.status).toBe(403);
      expect(((await rollback.json()) as any).message).toContain('rolling back');
      expect(await written()).toEqual(before);
      const status = (await (await s().fetch('/api/ownership/status?domain=rolling.pub.test', { token: key })).json()) as any;
      expect(status.proof.current).toBe(false);

      await prove(key, 'rolling.pub.test');
      expect((await saveBrand(key, 'rolling.pub.test', 'Three')).status).toBe(200);
      expect((await post('/api/brands/rolling.pub.test/rollback', key, { to_revision: 1 })).status).toBe(200);
    });

    test("admins moderate without proof: revise and roll back another organization's entry", async () => {
      const owner = await newKey(s().deployment);
      await prove(owner.key, 'moderated.pub.test');
      expect((await saveBrand(owner.key, 'moderated.pub.test', 'Original')).status).toBe(200);
      const admin = await newKey(s().deployment, 'admin');
      expect((await saveBrand(admin.key, 'moderated.pub.test', 'Cleaned up')).status).toBe(200);
      expect((await post('/api/brands/moderated.pub.test/rollback', admin.key, { to_revision: 1 })).status).toBe(200);
      // A member of another organization is still stopped (by ownership of the entry, then by proof).
      const other = await newKey(s().deployment);
      expect((await saveBrand(other.key, 'moderated.pub.test', 'Vandal')).status).toBe(403);
    });

    test('verification attempts are rate limited per organization and domain; a refused attempt leaves the nonce alive', async () => {
      const a = await newKey(s().deployment);
      // Start at the beginning of a 10-minute window so the whole test stays inside it.
      const now = clock().now().getTime();
      clock().set(new Date(Math.ceil(now / (10 * MINUTE)) * 10 * MINUTE));
      for (let i = 0; i < 10; i++) expect((await verify(a.key, 'limited.pub.test', 'dns')).status).toBe(409);
      const c = await challenge(a.key, 'limited.pub.test');
      txt[c.dns.name] = [[c.nonce]];
      const limited = await verify(a.key, 'limited.pub.test', 'dns');
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await limited.json()) as any).message).toContain('for one domain');
      // Other domains of the organization, and other organizations, have their own budget.
      expect((await verify(a.key, 'limited-too.pub.test', 'dns')).status).toBe(409);
      const b = await newKey(s().deployment);
      expect((await verify(b.key, 'limited.pub.test', 'dns')).status).toBe(409);
      clock().advance(10 * MINUTE);
      expect((await verify(a.key, 'limited.pub.test', 'dns')).status).toBe(200);
    });

    test('bad input is a 400 naming the field, before anything is stored', async () => {
      const { key } = await newKey(s().deployment);
      const bad = await post('/api/ownership/verify', key, { domain: 'x.pub.test', method: 'smtp' });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as any).message).toMatch(/^body\.method: must be dns or http/);
      const badDomain = await post('/api/ownership/challenge', key, { domain: 'раураl.com' });
      expect(badDomain.status).toBe(400);
      expect(((await badDomain.json()) as any).field).toBe('body.domain');
      expect((await s().fetch('/api/ownership/challenge', { method: 'POST', json: { domain: 'x.pub.test' } })).status).toBe(401);
    });
  },
);
