import { expect, test } from 'bun:test';
import { Crawler } from '../../core/ports/crawler.ts';
import { Database } from '../../core/ports/database.ts';
import { SearchSync } from '../../core/ports/search-sync.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { offlineCrawler, REGISTRY_TOKENS, registryPlugins } from '../support/registry.ts';
import { tableFingerprint } from '../support/rows.ts';

const TOKEN = REGISTRY_TOKENS.member;
const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/**
 * Hostile strings and shapes at the REST edge of the registry: each is a 400 naming the field,
 * never a 500, and changes no row. (Before the input rule, NUL and lone surrogates reached
 * Postgres and came back as 500s; deep bodies hit "stack depth limit exceeded".)
 */
forEachDatabase<{ s: TestServer; schema: string }>(
  'hostile input at the REST edge',
  async (adapter, schema) => {
    const s = await startServer(adapter, schema, registryPlugins(), { overrides: [[Crawler, offlineCrawler]] });
    // The start-up check of the search index writes its stamp: settle it before any fingerprint is taken.
    await s.deployment.get(SearchSync).drain();
    await s.deployment.scheduler.idle();
    return { s, schema };
  },
  async ({ s }) => s.close(),
  (get) => {
    const expectRefused = async (res: Response, field: string, status = 400) => {
      const body = (await res.json()) as Record<string, unknown>;
      expect({ status: res.status, field: body.field }).toEqual({ status, field });
      expect(String(body.message)).toStartWith(field);
    };

    test('NUL in query strings and path parameters: 400 naming the field', async () => {
      const { s } = get();
      const before = await tableFingerprint(s.deployment.get(Database), get().schema);
      await expectRefused(await s.fetch('/api/search?q=%00'), 'query.q');
      await expectRefused(await s.fetch('/api/brands/registry?search=a%00b'), 'query.search');
      await expectRefused(await s.fetch('/api/registry/agents?q=x%00'), 'query.q');
      await expectRefused(await s.fetch('/api/registry/agents?metric_id=%00'), 'query.metric_id');
      await expectRefused(await s.fetch('/api/brands/resolve?domain=%00.com'), 'query.domain');
      await expectRefused(await s.fetch('/api/registry/lookup/domain/a%00b.com'), 'params.domain');
      await expectRefused(await s.fetch('/api/registry/lookup/property?type=domain&value=%00'), 'query.value');
      expect(await tableFingerprint(s.deployment.get(Database), get().schema)).toEqual(before);
    });

    test('NUL and lone surrogates in JSON bodies (values and keys): 400 naming the member, nothing written', async () => {
      const { s } = get();
      const db = s.deployment.get(Database);
      const before = await tableFingerprint(db, get().schema);
      const post = (path: string, text: string) => s.fetch(path, { method: 'POST', token: TOKEN, headers: { 'content-type': 'application/json' }, body: text });
      await expectRefused(await post('/api/brands/save', '{"domain":"nul.example","brand_name":"A\\u0000B"}'), 'body.brand_name');
      await expectRefused(await post('/api/brands/save', '{"domain":"nul.example","brand_name":"Lone \\ud800 high"}'), 'body.brand_name');
      await expectRefused(
        await post('/api/brands/save', '{"domain":"nul.example","brand_name":"B","brand_manifest":{"x":{"\\udc00":1}}}'),
        'body.brand_manifest.x',
      );
      await expectRefused(await post('/api/properties/save', '{"domain":"nul.example","publisher_name":"P","x":"\\u0000"}'), 'body.x');
      await expectRefused(await post('/api/registry/agents', '{"url":"https://agent.example/mcp\\u0000","name":"A","type":"sales"}'), 'body.url');
      await expectRefused(await post('/api/brands/resolve/bulk', '{"domains":["ok.example","\\u0000"]}'), 'body.domains[1]');
      await expectRefused(
        await post('/api/adagents/validate', '{"adagents_json":{"authorized_agents":[{"url":"\\ud83d"}]}}'),
        'body.adagents_json.authorized_agents[0].url',
      );
      expect(await tableFingerprint(db, get().schema)).toEqual(before);
    });

    test('a body nested 20,000 deep is refused at the edge (400 naming where), not by Postgres', async () => {
      const { s } = get();
      const before = await tableFingerprint(s.deployment.get(Database), get().schema);
      const res = await s.fetch('/api/brands/save', {
        method: 'POST',
        token: TOKEN,
        headers: { 'content-type': 'application/json' },
        body: `{"domain":"deep.example","brand_name":"D","brand_manifest":${deep(20_000)}}`,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(/^body\.brand_manifest(\.a)+: nests deeper than 64 levels$/);
      expect(await tableFingerprint(s.deployment.get(Database), get().schema)).toEqual(before);
    });

    test('integers beyond the column type and non-object capability blocks are refused by the schema', async () => {
      const { s } = get();
      const saved = await s.fetch('/api/brands/save', { method: 'POST', token: TOKEN, json: { domain: 'rollback.example', brand_name: 'R' } });
      expect(saved.status).toBeLessThan(300);
      const before = await tableFingerprint(s.deployment.get(Database), get().schema);
      for (const to_revision of [1e308, 2 ** 31, 2 ** 53 + 2]) {
        await expectRefused(
          await s.fetch('/api/brands/rollback.example/rollback', { method: 'POST', token: TOKEN, json: { to_revision } }),
          'body.to_revision',
        );
      }
      for (const value of [true, 'text', 5, ['a']]) {
        const res = await s.fetch('/api/registry/agents', {
          method: 'POST',
          token: TOKEN,
          json: { url: 'https://caps.example/mcp', name: 'Caps', type: 'creative', capabilities: { creative_capabilities: value } },
        });
        await expectRefused(res, 'body.capabilities.creative_capabilities');
      }
      expect(await tableFingerprint(s.deployment.get(Database), get().schema)).toEqual(before);
    });

    test('wrong content type is 415 and a chunked body over the cap 413, both without a row changed', async () => {
      const { s } = get();
      const before = await tableFingerprint(s.deployment.get(Database), get().schema);
      const wrongType = await s.fetch('/api/brands/save', { method: 'POST', token: TOKEN, headers: { 'content-type': 'text/plain' }, body: '{}' });
      expect(wrongType.status).toBe(415);
      const huge = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(`{"domain":"big.example","brand_name":"${'x'.repeat(2 * 1024 * 1024)}"}`));
          controller.close();
        },
      });
      const tooBig = await s.fetch('/api/brands/save', { method: 'POST', token: TOKEN, headers: { 'content-type': 'application/json' }, body: huge });
      expect(tooBig.status).toBe(413);
      expect(await tableFingerprint(s.deployment.get(Database), get().schema)).toEqual(before);
    });
  },
);
