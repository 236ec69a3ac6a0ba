import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { assemble } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { ConfigError } from '../../core/config-error.ts';
import storagePostgres from '../../plugins/storage-postgres/index.ts';
import auth from '../../plugins/auth/index.ts';
import registryBrands from '../../plugins/registry-brands/index.ts';
import restHost from '../../hosts/rest/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import signals from '../../plugins/signals/index.ts';
import { serve, type RunningServer } from '../../hosts/serve.ts';
import { DATABASE_URL, dropSchema, skipPostgresUnlessConfigured, uniqueSchema } from '../support/db.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';

const TITLE = 'Postgres outages';
skipPostgresUnlessConfigured(TITLE);

const upstream = DATABASE_URL ? new URL(DATABASE_URL) : null;
/** DATABASE_URL with another host and port (the proxy's). */
const via = (host: string, port: number) => {
  const url = new URL(DATABASE_URL!);
  url.hostname = host;
  url.port = String(port);
  return url.href;
};
const noHang = () => AbortSignal.timeout(10_000);
const TOKEN = 'outage-test-token-000000001';

if (upstream) {
  describe(`${TITLE} [postgres]`, () => {
    const schema = uniqueSchema('outage');
    let proxy: TcpProxy;
    let server: RunningServer;
    let base: string;

    beforeAll(async () => {
      proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
      const preset = definePreset({
        name: 'outage',
        plugins: [
          // Short timeouts so the outage is noticed quickly; the values are configuration, not sleeps.
          storagePostgres({ url: via('127.0.0.1', proxy.port), schema, max: 4, connectTimeoutSeconds: 1, statementTimeoutMs: 300 }),
          auth({ testTokens: [{ token: TOKEN }] }),
          rateLimit(),
          registryBrands(),
          tasks({ worker: false }),
          idempotency(),
          signals(),
          restHost(),
          restTasks(),
        ],
      });
      const deployment = await assemble(preset, { env: { LOG_LEVEL: 'silent' } });
      server = await serve(deployment, { port: 0, hostname: '127.0.0.1' });
      base = server.url.href.replace(/\/$/, '');
    });
    afterAll(async () => {
      await proxy.setMode('forward');
      await server.close();
      await proxy.close();
      await dropSchema('postgres', schema);
    });

    const ready = () => fetch(`${base}/ready`, { signal: noHang() });
    // A listing that reads the database on every call (no cache in front of it).
    const listing = () => fetch(`${base}/api/brands/registry`, { signal: noHang() });
    // A task call: its pipeline maps the outage the same way.
    const task = () =>
      fetch(`${base}/tasks/get_signals`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ signal_spec: 'pets' }),
        signal: noHang(),
      });

    const expectUnavailable = async (res: Response) => {
      expect(res.status).toBe(503);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    };

    test('healthy: /ready 200, requests served', async () => {
      expect((await ready()).status).toBe(200);
      expect((await listing()).status).toBe(200);
      expect((await task()).status).toBe(200);
    });

    test('refused: /ready 503 and requests 503 with Retry-After, not 500', async () => {
      await proxy.setMode('refuse');
      await expectUnavailable(await ready());
      const res = await listing();
      await expectUnavailable(res);
      expect(((await res.json()) as { error: string }).error).toBe('service_unavailable');
      const call = await task();
      await expectUnavailable(call);
      expect(((await call.json()) as { code: string }).code).toBe('SERVICE_UNAVAILABLE');
    });

    test('black-holed: /ready answers 503 (it gives up after 1 s) and requests 503 after the statement timeout', async () => {
      await proxy.setMode('blackhole');
      await expectUnavailable(await ready());
      await expectUnavailable(await listing());
      await expectUnavailable(await task());
    });

    test('back: the same process serves again without a restart', async () => {
      await proxy.setMode('forward');
      expect((await ready()).status).toBe(200);
      expect((await listing()).status).toBe(200);
      expect((await task()).status).toBe(200);
    });
  });

  describe('Postgres start-up [postgres]', () => {
    test('a bracketed IPv6 host in DATABASE_URL is understood', async () => {
      const proxy = await startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) }, '::1');
      const deployment = await assemble(definePreset({ name: 'ipv6', plugins: [storagePostgres({ url: via('[::1]', proxy.port) })] }), {
        env: { LOG_LEVEL: 'silent' },
      });
      try {
        await deployment.start();
      } finally {
        await deployment.stop();
        await proxy.close();
      }
    });

    test('a failed connection says which variable, which host and what failed, without the password', async () => {
      const closed = await startTcpProxy({ host: upstream.hostname, port: 1 });
      const port = closed.port;
      await closed.close(); // nothing listens there now: connection refused
      const url = new URL(via('127.0.0.1', port));
      url.password = 's3cret-pw';
      const deployment = await assemble(definePreset({ name: 'refused', plugins: [storagePostgres({ url: url.href, connectTimeoutSeconds: 2 })] }), {
        env: { LOG_LEVEL: 'silent' },
      });
      const failure = await deployment.start().then(
        () => null,
        (e: unknown) => e,
      );
      await deployment.stop();
      expect(failure).toBeInstanceOf(ConfigError);
      const message = (failure as Error).message;
      expect(message).toStartWith(`DATABASE_URL: cannot connect to Postgres at ${decodeURIComponent(url.username)}@127.0.0.1:${port}${url.pathname}: `);
      expect(message).toContain('the connection was refused');
      expect(message).not.toContain('s3cret-pw');
    });
  });
}
