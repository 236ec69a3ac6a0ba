import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { BrandJsonRecords } from '../../core/ports/authoritative-records.ts';
import auth from '../../plugins/auth/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import registryOwnership from '../../plugins/registry-ownership/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { backfillSkeletons } from '../../lib/revisioned/store.ts';
import { BRAND_TABLES } from '../../plugins/registry-brands/tables.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

// Proof is off here so these tests isolate the look-alike rule (proof has its own suite).
forEachDatabase<{ s: TestServer; plain: TestServer }>(
  'look-alike registrations',
  async (adapter, schema) => {
    const s = await startServer(adapter, schema, [
      auth(),
      crawlerHttp(),
      rateLimit(),
      registryOwnership({ mode: 'off', protectedDomains: ['GoodBank.example', 'https://trusted-shop.example/'], pruneIntervalMs: 0 }),
      registryBrands(),
      registryProperties(),
      restHost(),
    ]);
    // The same tables without registry-ownership: today's behaviour, no look-alike rule.
    const plain = await startServer(adapter, schema, [auth(), rateLimit(), registryBrands(), registryProperties(), restHost()]);
    return { s, plain };
  },
  async ({ s, plain }) => {
    await plain.close();
    await s.close();
  },
  (get) => {
    const s = () => get().s;
    const db = () => s().deployment.get(Database);
    const saveBrand = (key: string, domain: string, server = s()) =>
      server.fetch('/api/brands/save', { method: 'POST', token: key, json: { domain, brand_name: 'X' } });
    const saveProperty = (key: string, domain: string) =>
      s().fetch('/api/properties/save', { method: 'POST', token: key, json: { publisher_domain: domain, authorized_agents: [] } });
    const rows = async (table: string, domains: string[]) =>
      (await db().query<{ n: number }>(sql`SELECT count(*)::int AS n FROM ${sql.raw(table)} WHERE domain = ANY(${domains}::text[])`))[0]!.n;

    test('a new entry that looks like a registered one answers 409 confusable_domain and writes nothing', async () => {
      const a = await newKey(s().deployment);
      const b = await newKey(s().deployment);
      expect((await saveBrand(a.key, 'paypal.example')).status).toBe(200);
      expect((await saveBrand(a.key, 'microsoft.example')).status).toBe(200);
      expect((await saveBrand(a.key, 'apple.example')).status).toBe(200);
      for (const [lookalike, original] of [
        ['paypa1.example', 'paypal.example'],
        ['rnicrosoft.example', 'microsoft.example'],
        ['аррӏе.example', 'apple.example'],
      ] as const) {
        const res = await saveBrand(b.key, lookalike);
        expect(res.status).toBe(409);
        const body = (await res.json()) as any;
        expect(body.error).toBe('confusable_domain');
        expect(body.message).toContain(original);
        expect(body.message).toContain('already registered');
        expect(body.details).toMatchObject({ lookalike_of: original, reason: 'registered' });
      }
      const cyrillic = (await (await saveBrand(b.key, 'аррӏе.example')).json()) as any;
      expect(cyrillic.message).toContain('(аррӏе.example)'); // the Unicode form is shown beside the A-label
      expect(await rows('brands', ['paypa1.example', 'rnicrosoft.example', 'xn--80ak6aa92e.example'])).toBe(0);
      expect(await rows('brand_revisions', ['paypa1.example', 'rnicrosoft.example', 'xn--80ak6aa92e.example'])).toBe(0);
      // Revising the original is not a creation and is not re-checked.
      expect((await saveBrand(a.key, 'paypal.example')).status).toBe(200);
    });

    test('operator-protected domains: look-alikes refused even when unregistered; the protected domain itself is not', async () => {
      const { key } = await newKey(s().deployment);
      const refused = await saveBrand(key, 'g00dbank.example');
      expect(refused.status).toBe(409);
      expect(((await refused.json()) as any).details).toMatchObject({ lookalike_of: 'goodbank.example', reason: 'protected' });
      expect((await saveProperty(key, 'trusted-sh0p.example')).status).toBe(409); // one deny list for both registries
      expect((await saveBrand(key, 'goodbank.example')).status).toBe(200);
      expect(await rows('brands', ['g00dbank.example'])).toBe(0);
      expect(await rows('property_entries', ['trusted-sh0p.example'])).toBe(0);
    });

    test('hosted properties are checked against registered properties', async () => {
      const { key } = await newKey(s().deployment);
      expect((await saveProperty(key, 'newsroom.example')).status).toBe(200);
      const res = await saveProperty(key, 'newsroorn.example');
      expect(res.status).toBe(409);
      expect(((await res.json()) as any).details.lookalike_of).toBe('newsroom.example');
    });

    test('crawled (authoritative) entries count as registered', async () => {
      await db().transaction((tx) =>
        s().deployment.get(BrandJsonRecords).record(tx, 'crawled-brand.example', { name: 'Crawled', url: 'https://crawled-brand.example' }),
      );
      const [row] = await db().query<{ skeleton: string }>(sql`SELECT skeleton FROM brands WHERE domain = 'crawled-brand.example'`);
      expect(row?.skeleton).toBe('crawled-brand.example');
      const { key } = await newKey(s().deployment);
      expect((await saveBrand(key, 'crawied-brand.example')).status).toBe(200); // i is not l
      expect((await saveBrand(key, 'craw1ed-brand.example')).status).toBe(409);
    });

    test('look-alikes saved at once: exactly one is created', async () => {
      // 16 spellings of one skeleton (each o or 0), each by its own organization, all at once.
      const domains = Array.from({ length: 16 }, (_, i) => `z${[0, 1, 2, 3].map((b) => ((i >> b) & 1 ? '0' : 'o')).join('')}m.example`);
      const keys = await Promise.all(domains.map(() => newKey(s().deployment)));
      const statuses = await Promise.all(domains.map((d, i) => saveBrand(keys[i]!.key, d).then((r) => r.status)));
      expect(statuses.filter((x) => x === 200).length).toBe(1);
      expect(statuses.filter((x) => x === 409).length).toBe(15);
      expect(await rows('brands', domains)).toBe(1);
    });

    test('administrators may create a look-alike (the human review of the spec)', async () => {
      const admin = await newKey(s().deployment, 'admin');
      expect((await saveBrand(admin.key, 'paypa1.example')).status).toBe(200);
    });

    test('rows without a skeleton (written before the column, or after a fact-table change) are filled at start', async () => {
      await db().query(sql`UPDATE brands SET skeleton = NULL WHERE domain IN ('paypal.example', 'goodbank.example')`);
      expect(await backfillSkeletons(db(), BRAND_TABLES)).toBe(2);
      expect(await backfillSkeletons(db(), BRAND_TABLES)).toBe(0);
      const [row] = await db().query<{ skeleton: string }>(sql`SELECT skeleton FROM brands WHERE domain = 'paypal.example'`);
      expect(row!.skeleton).toBe('paypal.example');
    });

    test('without registry-ownership in the deployment, saves keep their old behaviour (no look-alike rule)', async () => {
      const { key } = await newKey(get().plain.deployment);
      expect((await saveBrand(key, 'rnicrosoft-plain.example', get().plain)).status).toBe(200);
      expect((await saveBrand(key, 'microsoft-plain.example', get().plain)).status).toBe(200);
    });
  },
);
