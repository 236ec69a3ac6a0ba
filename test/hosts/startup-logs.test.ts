import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import pino from 'pino';
import { sql } from '../../core/sql.ts';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { Database } from '../../core/ports/database.ts';
import { assemble } from '../../core/deployment.ts';
import { definePreset, type PluginEntry } from '../../core/config.ts';
import { serve, type RunningServer } from '../../hosts/serve.ts';
import signalsPreset from '../../config/signals-agent.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { forEachDatabase, storagePlugin, uniqueSchema, dropSchema } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { newKey } from '../support/principals.ts';
import { offlineCrawler, registryPlugins } from '../support/registry.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import auth from '../../plugins/auth/index.ts';

type Line = { level: number; msg: string; status?: number; path?: string; [k: string]: unknown };

/** A deployment whose log lines land in `lines`; `waitFor` resolves with the first line matching. */
async function logged(schema: string, plugins: PluginEntry[], env: Record<string, string> = {}) {
  const lines: Line[] = [];
  const waiters: Array<{ match: (l: Line) => boolean; resolve: (l: Line) => void }> = [];
  const write = (text: string) => {
    const line = JSON.parse(text) as Line;
    lines.push(line);
    for (const w of waiters.filter((w) => w.match(line))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(line);
    }
  };
  const waitFor = (match: (l: Line) => boolean) =>
    new Promise<Line>((resolve) => {
      const found = lines.find(match);
      if (found) resolve(found);
      else waiters.push({ match, resolve });
    });
  const logger = pino({ level: 'info', base: undefined }, { write });
  const deployment = await assemble(definePreset({ name: `logs-${schema}`, plugins: [await storagePlugin('pglite', schema), ...plugins] }), { env, logger });
  return { lines, waitFor, deployment };
}

describe('client-caused failures are not server errors', () => {
  const schema = uniqueSchema('clientlogs');
  let server: RunningServer;
  let lines: Line[];
  let waitFor: (match: (l: Line) => boolean) => Promise<Line>;
  beforeAll(async () => {
    const d = await logged(schema, [auth(), rateLimit(), registryBrands(), restHost()]);
    ({ lines, waitFor } = d);
    server = await serve(d.deployment, { port: 0, hostname: '127.0.0.1' });
  });
  afterAll(async () => {
    await server.close();
    await dropSchema('pglite', schema);
  });

  test('a body the client abandons midway is a 400 in the access log, with no error line', async () => {
    await new Promise<void>((done) => {
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write('POST /api/brands/resolve/bulk HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"domains":[');
        setImmediate(() => {
          socket.destroy();
          done();
        });
      });
    });
    const access = await waitFor((l) => l.msg === 'request' && l.path === '/api/brands/resolve/bulk');
    expect(access.status).toBeLessThan(500);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  });

  test('oversized bodies, with or without Content-Length, are 413 without an error line', async () => {
    const big = `{"domains":["${'a'.repeat(2 * 1024 * 1024)}"]}`;
    const declared = await fetch(`${server.url}api/brands/resolve/bulk`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    expect(declared.status).toBe(413);
    const chunked = await fetch(`${server.url}api/brands/resolve/bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Blob([big]).stream(),
    });
    expect(chunked.status).toBe(413);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  });
});

forEachDatabase<{ s: TestServer; clock: ManualClock }>(
  'API key last use',
  async (adapter, schema) => {
    const clock = new ManualClock(new Date('2026-02-01T10:00:00Z'));
    const s = await startServer(adapter, schema, registryPlugins(), {
      overrides: [
        [Crawler, offlineCrawler],
        [Clock, clock],
      ],
    });
    return { s, clock };
  },
  async ({ s }) => s.close(),
  (get) => {
    test('api_keys.last_used_at is set on use, and written at most once a minute per key', async () => {
      const { s, clock } = get();
      const { key, orgId } = await newKey(s.deployment, 'member');
      const lastUsed = async () =>
        (await s.deployment.get(Database).query<{ at: Date | string | null }>(sql`SELECT last_used_at AS at FROM api_keys WHERE org_id = ${orgId}::uuid`))[0]!
          .at;
      expect(await lastUsed()).toBeNull();
      const call = async () => expect((await s.fetch('/api/registry/agents/search', { token: key })).status).toBe(200);
      await call();
      const first = new Date((await lastUsed())!).toISOString();
      expect(first).toBe('2026-02-01T10:00:00.000Z');
      clock.advance(30_000);
      await call();
      expect(new Date((await lastUsed())!).toISOString()).toBe(first);
      clock.advance(31_000);
      await call();
      expect(new Date((await lastUsed())!).toISOString()).toBe('2026-02-01T10:01:01.000Z');
    });
  },
);

describe('start-up messages', () => {
  test('a deployment that keeps secrets warns at start when SECRETS_KEY is unset, and only then', async () => {
    const warned = async (plugins: PluginEntry[], env: Record<string, string>) => {
      const schema = uniqueSchema('secretswarn');
      const { lines, deployment } = await logged(schema, plugins, env);
      await deployment.start();
      await deployment.stop();
      await dropSchema('pglite', schema);
      return lines.some((l) => l.level === 40 && l.msg.startsWith('SECRETS_KEY is not set'));
    };
    const signals = signalsPreset.plugins.slice(1);
    expect(await warned(signals, {})).toBe(true);
    expect(await warned(signals, { SECRETS_KEY: 'k'.repeat(40) })).toBe(false);
    expect(await warned([auth(), rateLimit(), registryBrands(), restHost()], {})).toBe(false);
  });

  test('`bun run start config/nope.ts` names the presets instead of printing a module trace', async () => {
    const start = Bun.spawn(['bun', resolve(import.meta.dir, '../../hosts/start.ts'), 'config/nope.ts'], {
      cwd: resolve(import.meta.dir, '../..'),
      stderr: 'pipe',
      stdout: 'pipe',
    });
    const [code, stderr] = await Promise.all([start.exited, new Response(start.stderr).text()]);
    expect(code).toBe(2);
    // Every preset of config/ is named (and nothing else of the folder, such as storage.ts).
    const listed = /the presets are: (.*)$/.exec(stderr.trim())?.[1]?.split(', ') ?? [];
    expect(stderr.trim()).toStartWith('Configuration error: no preset at config/nope.ts; the presets are: ');
    expect(listed).toContain('config/registry.ts');
    expect(listed).toContain('config/signals-agent.ts');
    expect(listed).toContain('config/test-agent.ts');
    expect(listed).not.toContain('config/storage.ts');
    expect(listed).toEqual([...listed].sort());
  });
});
