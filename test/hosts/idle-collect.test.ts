import { expect, test } from 'bun:test';
import { idleCollector } from '../../hosts/idle-collect.ts';
import { serve } from '../../hosts/serve.ts';
import { assemble } from '../../core/deployment.ts';
import { definePreset } from '../../core/config.ts';
import { ManualTimers } from '../../core/scheduler.ts';

test('one collection per burst, only after an interval without requests', () => {
  let collections = 0;
  const { touch, job } = idleCollector(1000, () => collections++);
  const tick = () => void job.run(new AbortController().signal);
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

test('serve() schedules the collection on its deployment; IDLE_COLLECT_MS=0 turns it off; a bad value is a configuration error', async () => {
  const preset = definePreset({ name: 'idle-collect', plugins: [] });
  const on = await assemble(preset, { env: { LOG_LEVEL: 'silent', IDLE_COLLECT_MS: '500' }, timers: new ManualTimers() });
  const off = await assemble(preset, { env: { LOG_LEVEL: 'silent', IDLE_COLLECT_MS: '0' }, timers: new ManualTimers() });
  const servers = [await serve(on, { port: 0, hostname: '127.0.0.1' }), await serve(off, { port: 0, hostname: '127.0.0.1' })];
  try {
    expect(on.scheduler.list()).toContain('host.idle-collect');
    expect(off.scheduler.list()).not.toContain('host.idle-collect');
  } finally {
    for (const s of servers) await s.close();
  }
  await expect(assemble(preset, { env: { IDLE_COLLECT_MS: '-1' } })).rejects.toThrow(/server\.idleCollectMs|IDLE_COLLECT_MS/);
});
