import { expect, test } from 'bun:test';
import { idleCollector, shrink } from '../../hosts/idle-collect.ts';
import { serve } from '../../hosts/serve.ts';
import { assemble } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { ManualTimers } from '../../core/scheduler.ts';

test('one collection per burst, only after an interval without requests', () => {
  let collections = 0;
  const {
    touch,
    jobs: [job],
  } = idleCollector([{ name: 'collect', idleMs: 1000, collect: () => collections++ }]);
  const tick = () => void job!.run(new AbortController().signal);
  tick();
  expect(collections).toBe(0); // nothing served yet
  touch();
  touch();
  tick(); // requests arrived during this interval: still busy
  expect(collections).toBe(0);
  tick(); // a quiet interval after the burst
  expect(collections).toBe(1);
  tick();
  tick();
  expect(collections).toBe(1); // idle: nothing more to return
  touch();
  tick();
  touch();
  tick(); // a request in each interval: never idle
  expect(collections).toBe(1);
  tick();
  expect(collections).toBe(2);
});

test('stages share the requests: each collects once its own interval was quiet', () => {
  const ran: string[] = [];
  const { touch, jobs } = idleCollector([
    { name: 'short', idleMs: 1000, collect: () => ran.push('short') },
    { name: 'long', idleMs: 5000, collect: () => ran.push('long') },
  ]);
  const [short, long] = jobs.map((job) => () => void job.run(new AbortController().signal));
  touch();
  short!();
  long!();
  short!(); // quiet for the short stage
  expect(ran).toEqual(['short']);
  touch(); // a request before the long stage's next run
  long!();
  expect(ran).toEqual(['short']);
  long!(); // quiet for the long stage too
  expect(ran).toEqual(['short', 'long']);
});

test('serve() schedules the collection and the shrink; 0 turns each off; a bad value is a configuration error', async () => {
  const preset = definePreset({ name: 'idle-collect', plugins: [] });
  const both = await assemble(preset, { env: { LOG_LEVEL: 'silent', IDLE_COLLECT_MS: '500', IDLE_SHRINK_MS: '5000' }, timers: new ManualTimers() });
  const shrinkOnly = await assemble(preset, { env: { LOG_LEVEL: 'silent', IDLE_COLLECT_MS: '0', IDLE_SHRINK_MS: '5000' }, timers: new ManualTimers() });
  const off = await assemble(preset, { env: { LOG_LEVEL: 'silent', IDLE_COLLECT_MS: '0', IDLE_SHRINK_MS: '0' }, timers: new ManualTimers() });
  const servers = [both, shrinkOnly, off].map((d) => serve(d, { port: 0, hostname: '127.0.0.1' }));
  try {
    await Promise.all(servers);
    expect(both.scheduler.list()).toEqual(expect.arrayContaining(['host.idle-collect', 'host.idle-shrink']));
    expect(shrinkOnly.scheduler.list()).toContain('host.idle-shrink');
    expect(shrinkOnly.scheduler.list()).not.toContain('host.idle-collect');
    expect(off.scheduler.list().filter((name) => name.startsWith('host.idle'))).toEqual([]);
  } finally {
    for (const s of servers) await (await s).close();
  }
  await expect(assemble(preset, { env: { IDLE_COLLECT_MS: '-1' } })).rejects.toThrow(/server\.idleCollectMs|IDLE_COLLECT_MS/);
  await expect(assemble(preset, { env: { IDLE_SHRINK_MS: 'soon' } })).rejects.toThrow(/server\.idleShrinkMs|IDLE_SHRINK_MS/);
});

test('the default deployment shrinks after 30 s idle', async () => {
  const deployment = await assemble(definePreset({ name: 'idle-default', plugins: [] }), { env: { LOG_LEVEL: 'silent' } });
  expect(deployment.config.server.idleShrinkMs).toBe(30_000);
  expect(deployment.config.server.idleCollectMs).toBe(2000);
});

test('the shrink still has the engine call it relies on (deprecated in Bun types: an upgrade that removes it fails here)', () => {
  expect(typeof (Bun as { shrink?: unknown }).shrink).toBe('function');
  expect(() => shrink()).not.toThrow();
});
