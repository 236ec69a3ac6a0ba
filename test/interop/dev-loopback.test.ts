import { afterAll, expect, test } from 'bun:test';
import pino from 'pino';
import { assemble } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { CrawlerError } from '../../core/ports/crawler.ts';
import { HttpCrawler } from '../../plugins/crawler-http/index.ts';
import webhooks from '../../plugins/webhooks/index.ts';
import signalsPreset from '../../config/signals-agent.ts';
import testAgentPreset from '../../config/test-agent.ts';
import { storagePlugin } from '../support/db.ts';
import { tableResolver } from '../support/loopback.ts';

// The development setting that lets a buyer's webhook receiver run on loopback: loopback only
// (never private ranges), only for requests that ask for it, off unless DEV_LOOPBACK_WEBHOOKS is set,
// and loud when on.
const receiver = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('ok') });
afterAll(() => receiver.stop(true));
const crawler = new HttpCrawler({ resolver: tableResolver({ localhost: ['127.0.0.1'], 'intranet.example': ['10.0.0.8'] }) });
const code = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e) => (e instanceof CrawlerError ? e.code : String(e)),
  );
const post = { method: 'POST' as const, body: '{}', requireHttps: false, maxRedirects: 0 };

test('loopback targets are reached only with allowLoopback; private ranges never', async () => {
  const url = `http://127.0.0.1:${receiver.port}/hook`;
  expect(await code(crawler.fetch(url, post))).toBe('ssrf_blocked');
  expect(await code(crawler.fetch(`https://127.0.0.1:${receiver.port}/hook`, { method: 'POST' }))).toBe('ssrf_blocked');
  expect(await code(crawler.fetch(`http://localhost:${receiver.port}/hook`, post))).toBe('ssrf_blocked');
  expect(await code(crawler.fetch(url, { ...post, allowLoopback: true }))).toBe('ok');
  expect(await code(crawler.fetch(`http://localhost:${receiver.port}/hook`, { ...post, allowLoopback: true }))).toBe('ok');
  for (const target of [
    'http://10.0.0.8/hook',
    'http://intranet.example/hook',
    'http://192.168.1.10/hook',
    'http://169.254.169.254/latest',
    'http://[::ffff:127.0.0.1]/x',
  ]) {
    expect({ target, code: await code(crawler.fetch(target, { ...post, allowLoopback: true })) }).toEqual({ target, code: 'ssrf_blocked' });
  }
});

test('no preset turns it on; DEV_LOOPBACK_WEBHOOKS=true does, with a loud warning', async () => {
  for (const preset of [signalsPreset, testAgentPreset]) {
    expect(JSON.stringify(preset.plugins.map((p) => (typeof p === 'function' ? null : p.rawOptions)))).not.toContain('allowLoopback');
  }
  const lines: any[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const preset = definePreset({
    name: 'dev-loopback',
    plugins: [await storagePlugin('pglite', `t_devloop_${process.pid}`), webhooks({ outbox: { workers: false } })],
  });
  const deployment = await assemble(preset, { env: { DEV_LOOPBACK_WEBHOOKS: 'true' }, logger });
  expect(lines.some((l) => l.level === 40 && /DEVELOPMENT SETTING ON/.test(l.msg) && l.setting === 'DEV_LOOPBACK_WEBHOOKS')).toBe(true);
  lines.length = 0;
  await assemble(preset, { env: {}, logger });
  expect(lines.some((l) => /DEVELOPMENT SETTING/.test(l.msg ?? ''))).toBe(false);
  await deployment.stop();
});
