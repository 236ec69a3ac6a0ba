import { expect, test } from 'bun:test';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { confusableSkeleton, normalizeDomain } from '../../core/domain.ts';
import auth from '../../plugins/auth/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';

test('confusable skeletons fold look-alike letters and digits, not different words', () => {
  const sk = (d: string) => confusableSkeleton(normalizeDomain(d));
  expect(sk('paypa1.com')).toBe(sk('paypal.com'));
  expect(sk('g00gle.com')).toBe(sk('google.com'));
  expect(sk('аррӏе.com')).toBe(sk('apple.com')); // all-Cyrillic, a single script, so normalization accepts it
  expect(sk('barn.com')).not.toBe(sk('bam.com'));
  expect(sk('bücher.de')).not.toBe(sk('bucher.de'));
});

forEachDatabase<TestServer>(
  'look-alike registrations',
  (adapter, schema) => startServer(adapter, schema, [auth(), registryBrands({ protectedDomains: ['goodbank.example'] }), registryProperties(), restHost()]),
  (s) => s.close(),
  (get) => {
    test('a new entry that looks like a registered or protected domain is refused (409) and not written; admins may override', async () => {
      const a = await newKey(get().deployment);
      const b = await newKey(get().deployment);
      const save = (key: string, domain: string) => get().fetch('/api/brands/save', { method: 'POST', token: key, json: { domain, brand_name: 'X' } });
      expect((await save(a.key, 'paypal.example')).status).toBe(200);
      const lookalike = await save(b.key, 'paypa1.example');
      expect(lookalike.status).toBe(409);
      const body = (await lookalike.json()) as any;
      expect(body.error).toBe('confusable_domain');
      expect(body.message).toContain('paypal.example');
      expect((await save(b.key, 'раураl.example')).status).toBe(400); // mixed scripts: refused at normalization
      expect((await save(a.key, 'g00dbank.example')).status).toBe(409); // protected, though not registered
      expect((await save(b.key, 'goodbank.example')).status).toBe(200); // the protected domain itself
      const rows = await get().deployment.get(Database).query<{ domain: string }>(sql`SELECT domain FROM brands WHERE domain IN ('paypa1.example', 'g00dbank.example')`);
      expect(rows).toEqual([]);
      const admin = await newKey(get().deployment, 'admin');
      expect((await save(admin.key, 'paypa1.example')).status).toBe(200);
      // Revisions of an existing entry are not re-checked.
      expect((await save(a.key, 'paypal.example')).status).toBe(200);
    });
  },
);
