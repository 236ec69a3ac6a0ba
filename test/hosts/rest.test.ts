import { expect, test } from 'bun:test';
import YAML from 'yaml';
import auth from '../../plugins/auth/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import registryProperties from '../../plugins/registry-properties/index.ts';
import restHost from '../../hosts/rest/index.ts';
import registryAgents from '../../plugins/registry-agents/index.ts';
import { search } from '../../config/search.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { freePort } from '../support/loopback.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

forEachDatabase(
  'REST host',
  (adapter, schema) =>
    startServer(adapter, schema, [auth(), search, rateLimit(), registryBrands(), registryProperties(), registryAgents(), restHost()], {
      env: { MAX_BODY_BYTES: '4096' },
    }),
  (s) => s.close(),
  (get) => {
    const s = (): TestServer => get();

    test('health, readiness, request ids and JSON 404s', async () => {
      expect(await (await s().fetch('/health')).json()).toEqual({ status: 'ok' });
      const ready = await s().fetch('/ready');
      expect(ready.status).toBe(200);
      expect((await ready.json()).status).toBe('ready');
      const withId = await s().fetch('/health', { headers: { 'x-request-id': 'abc-123' } });
      expect(withId.headers.get('x-request-id')).toBe('abc-123');
      const generated = await s().fetch('/health', { headers: { 'x-request-id': 'bad id with spaces' } });
      expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-z]{6,}$/);
      const missing = await s().fetch('/api/nothing-here');
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ error: 'not_found' });
    });

    test('bodies over the cap get 413, with or without a Content-Length', async () => {
      const big = JSON.stringify({ domains: ['x'.repeat(5000)] });
      const declared = await s().fetch('/api/brands/resolve/bulk', { method: 'POST', body: big, headers: { 'content-type': 'application/json' } });
      expect(declared.status).toBe(413);
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(big));
          c.close();
        },
      });
      const chunked = await s().fetch('/api/brands/resolve/bulk', {
        method: 'POST',
        body: stream,
        headers: { 'content-type': 'application/json' },
        duplex: 'half',
      } as any);
      expect(chunked.status).toBe(413);
    });

    test('OpenAPI 3.1 YAML lists every endpoint with every parameter, at both paths', async () => {
      const res = await s().fetch('/openapi/registry.yaml');
      expect(res.headers.get('content-type')).toContain('yaml');
      const text = await res.text();
      expect(await (await s().fetch('/.well-known/openapi.yaml')).text()).toBe(text);
      const doc = YAML.parse(text);
      expect(doc.openapi).toBe('3.1.0');
      for (const e of s().deployment.get(Endpoints).list()) {
        const op = doc.paths[e.path]?.[e.method.toLowerCase()];
        expect(op).toBeDefined();
        const names = (op.parameters ?? []).filter((p: any) => p.in !== 'header').map((p: any) => `${p.in}:${p.name}`);
        const expected = [
          ...[...e.path.matchAll(/\{(\w+)\}/g)].map((m) => `path:${m[1]}`),
          ...Object.keys((e.query as any)?.entries ?? {}).map((k) => `query:${k}`),
        ];
        expect(names.sort()).toEqual(expected.sort());
        if (e.body) expect(op.requestBody.content['application/json'].schema.type).toBe('object');
        if (e.auth === 'required') expect(op.security).toEqual([{ bearerAuth: [] }]);
      }
      // Parameters whose schemas transform keep their input type; integers are integers with their bounds.
      const history = doc.paths['/api/brands/history'].get.parameters;
      expect(history.find((p: any) => p.name === 'domain')).toMatchObject({ required: true, schema: { type: 'string' } });
      expect(history.find((p: any) => p.name === 'limit')).toMatchObject({
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      });
      const save = doc.paths['/api/brands/save'].post.requestBody.content['application/json'].schema;
      expect(save.required).toEqual(expect.arrayContaining(['domain', 'brand_name']));
      expect(Object.keys(save.properties)).toEqual(expect.arrayContaining(['domain', 'brand_name', 'brand_manifest']));
    });
  },
);

test('SIGTERM drains in-flight requests before the process exits', async () => {
  const port = freePort();
  const proc = Bun.spawn(['bun', 'hosts/start.ts', 'test/fixtures/slow-preset.ts'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: 'memory://', DATABASE_URL: '', LOG_LEVEL: 'silent' },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const stdout = proc.stdout.getReader();
  // Wait for readiness (a loaded machine can take a while to boot PGlite).
  for (let i = 0; i < 900; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await Bun.sleep(100);
  }
  const inFlight = fetch(`http://127.0.0.1:${port}/slow`);
  // SIGTERM once the request is in the handler (the endpoint says so on stdout), not after a guess.
  for (let said = ''; !said.includes('slow request in'); ) {
    const { value, done } = await stdout.read();
    if (done) throw new Error('the server exited before the request arrived');
    said += new TextDecoder().decode(value);
  }
  proc.kill('SIGTERM');
  const res = await inFlight;
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ done: true });
  expect(await proc.exited).toBe(0);
  await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
}, 120_000);

test('exactly one JSON log line per request, carrying the request id, with no query string or credentials', async () => {
  const pino = (await import('pino')).default;
  const { assemble } = await import('../../core/deployment.ts');
  const { definePreset } = await import('../../core/config.ts');
  const { serve } = await import('../../hosts/serve.ts');
  const { storagePlugin, uniqueSchema, dropSchema } = await import('../support/db.ts');
  const lines: string[] = [];
  const logger = pino({ level: 'info', base: undefined }, { write: (line: string) => void lines.push(line) });
  const schema = uniqueSchema('accesslog');
  const deployment = await assemble(
    definePreset({ name: 'log', plugins: [await storagePlugin('pglite', schema), auth(), rateLimit(), registryBrands(), restHost()] }),
    {
      logger,
      env: {},
    },
  );
  const server = await serve(deployment, { port: 0, hostname: '127.0.0.1' });
  lines.length = 0;
  await fetch(new URL('/api/brands/resolve?domain=secret-query.example', server.url), {
    headers: { 'x-request-id': 'req-1', authorization: 'Bearer proto_secret' },
  });
  await fetch(new URL('/health', server.url), { headers: { 'x-request-id': 'req-2' } });
  const unrouted = await fetch(new URL('/no/such/route?secret=1', server.url));
  const entries = lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request');
  expect(entries.map((e) => [e.requestId, e.method, e.path, e.status])).toEqual([
    ['req-1', 'GET', '/api/brands/resolve', 404],
    ['req-2', 'GET', '/health', 200],
    [unrouted.headers.get('x-request-id'), 'GET', '/no/such/route', 404],
  ]);
  expect(lines.join('')).not.toContain('secret');
  await server.close();
  await dropSchema('pglite', schema);
});
