import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import auth from '../../plugins/auth/index.ts';
import oauthPlugin from '../../plugins/oauth/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import searchPostgres from '../../plugins/search-postgres/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import registryFeed from '../../plugins/registry-feed/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import registryCrawl from '../../plugins/registry-crawl/index.ts';
import registryProbes from '../../plugins/registry-probes/index.ts';
import registryOwnership from '../../plugins/registry-ownership/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { dropSchema, uniqueSchema } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import { openapiTypescript } from '../support/openapi-typescript.ts';

/** The served document, linted with Redocly's recommended rules and turned into a typed client (openapi-typescript + openapi-fetch). */
const ROOT = join(import.meta.dir, '../..');
const OUT = join(ROOT, 'test/artifacts/openapi-client');
const schema = uniqueSchema('openapi-clients');
let s: TestServer;
let key: string;

const run = (cmd: string[]) => {
  const p = Bun.spawnSync(cmd, {
    cwd: ROOT,
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, NO_COLOR: '1', REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
};

beforeAll(async () => {
  s = await startServer('pglite', schema, [
    auth(),
    oauthPlugin(),
    rateLimit({ pruneIntervalMs: 0 }),
    crawlerHttp(),
    registryBrands(),
    registryProperties(),
    searchPostgres(),
    registryAgents(),
    registryFeed({ sequenceIntervalMs: 0 }),
    registryCrawl({ workers: 0, scheduleIntervalMs: 0 }),
    registryProbes(),
    registryOwnership({ mode: 'off', pruneIntervalMs: 0 }),
    restHost(),
  ]);
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'registry.yaml'), await (await s.fetch('/openapi/registry.yaml')).text());
  ({ key } = await newKey(s.deployment));
  await s.fetch('/api/brands/save', { method: 'POST', token: key, json: { domain: 'typed.example', brand_name: 'Typed' } });
  await s.fetch('/api/registry/agents', {
    method: 'POST',
    token: key,
    json: { url: 'https://typed-agent.example/mcp', name: 'Typed agent', type: 'sales', inventory: { channels: ['display'] } },
  });
});
afterAll(async () => {
  await s?.close();
  await dropSchema('pglite', schema);
});

test('Redocly recommended lint: no errors; the only warnings are operations without any input (no 4XX to document)', () => {
  const r = run(['node_modules/.bin/redocly', 'lint', join(OUT, 'registry.yaml'), '--extends=recommended', '--format=json']);
  const report = JSON.parse(r.out.slice(r.out.indexOf('{'))) as {
    totals: { errors: number; warnings: number };
    problems: Array<{ ruleId: string; severity: string; location: Array<{ pointer: string }> }>;
  };
  expect(report.totals.errors).toBe(0);
  const warnings = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}`);
  expect(warnings.sort()).toEqual(
    [
      // The official registry's paths, kept as its client calls them: /api/properties/check/{reportId}
      // beside /api/properties/{domain}/rollback (different methods; literal segments route first).
      'no-ambiguous-paths #/paths/~1api~1properties~1check~1{reportId}',
      'operation-4xx-response #/paths/~1api~1registry~1stats/get/responses',
      'operation-4xx-response #/paths/~1health/get/responses',
      'operation-4xx-response #/paths/~1openapi~1registry.yaml/get/responses',
      'operation-4xx-response #/paths/~1ready/get/responses',
    ].sort(),
  );
});

test('a client generated with openapi-typescript + openapi-fetch typechecks and gets typed results', async () => {
  const gen = openapiTypescript(join(OUT, 'registry.yaml'), join(OUT, 'registry.d.ts'));
  expect(gen.code, gen.err).toBe(0);
  writeFileSync(
    join(OUT, 'client.ts'),
    `import createClient from 'openapi-fetch';
import type { paths } from './registry.d.ts';

/** Resolve a brand, search agents and read the feed, with the types the document declares. */
export async function main(baseUrl: string, key: string) {
  const client = createClient<paths>({ baseUrl });
  const headers = { authorization: \`Bearer \${key}\` };
  const brand = await client.GET('/api/brands/resolve', { params: { query: { domain: 'typed.example' } } });
  if (!brand.data) throw new Error('no brand');
  const name: string = brand.data.brand_name;
  const source: 'brand_json' | 'enriched' | 'community' | 'hosted' = brand.data.source;

  const search = await client.GET('/api/registry/agents/search', { params: { query: { channels: 'display', limit: 10 } }, headers });
  if (!search.data) throw new Error('no search');
  const first = search.data.results[0];
  const score: number | undefined = first?.relevance_score;
  const more: boolean = search.data.has_more;

  const feed = await client.GET('/api/registry/feed', { params: { query: { limit: 100, types: 'brand.*' } }, headers });
  if (!feed.data) throw new Error('no feed');
  const types: string[] = feed.data.events.map((e) => e.event_type);
  const cursor: string | null = feed.data.cursor;

  // @ts-expect-error limit is an integer, not text
  void client.GET('/api/registry/feed', { params: { query: { limit: 'ten' } }, headers });
  // @ts-expect-error domain is required
  void client.GET('/api/brands/resolve', { params: { query: {} } });

  return { name, source, score, more, types, cursor };
}

if (import.meta.main) console.log(JSON.stringify(await main(process.argv[2]!, process.argv[3]!)));
`,
  );
  writeFileSync(
    join(OUT, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'bundler',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        allowImportingTsExtensions: true,
        lib: ['ES2022', 'DOM'],
        types: ['bun'],
      },
      files: ['client.ts', 'registry.d.ts'],
    }),
  );
  const tsc = run(['node_modules/.bin/tsc', '-p', join(OUT, 'tsconfig.json')]);
  expect(tsc.out + tsc.err).toBe('');
  expect(tsc.code).toBe(0);

  // Asynchronously: this process serves the registry the client calls.
  const child = Bun.spawn(['bun', join(OUT, 'client.ts'), s.base, key], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  expect(code, stderr).toBe(0);
  const out = JSON.parse(stdout);
  expect(out).toMatchObject({ name: 'Typed', source: 'community', more: false });
  expect(out.score).toBeNumber();
  expect(out.types).toContain('brand.created');
});
