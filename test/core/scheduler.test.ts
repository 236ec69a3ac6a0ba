import { expect, test } from 'bun:test';
import { ManualTimers, Scheduler } from '../../core/scheduler.ts';
import { createLogger } from '../../core/log.ts';

const logger = createLogger('silent');

test('jobs run at start and then every interval, on the test clock', async () => {
  const timers = new ManualTimers();
  const scheduler = new Scheduler(logger, timers);
  const runs: string[] = [];
  scheduler.add({ name: 'a', intervalMs: 1000, run: () => void runs.push('a') });
  scheduler.add({ name: 'b', intervalMs: 500, runAtStart: false, run: () => void runs.push('b') });
  scheduler.start();
  await scheduler.idle();
  expect(runs).toEqual(['a']);
  timers.advance(500);
  await scheduler.idle();
  expect(runs).toEqual(['a', 'b']);
  timers.advance(500);
  await scheduler.idle();
  expect(runs.sort()).toEqual(['a', 'a', 'b', 'b']);
  await scheduler.stop();
  timers.advance(10_000);
  await scheduler.idle();
  expect(runs).toHaveLength(4);
});

test('a job never overlaps itself; a wake during a run runs it once more afterwards', async () => {
  const scheduler = new Scheduler(logger, new ManualTimers());
  let active = 0;
  let maxActive = 0;
  let runs = 0;
  let release!: () => void;
  const job = scheduler.add({
    name: 'slow',
    intervalMs: 60_000,
    async run() {
      active++;
      maxActive = Math.max(maxActive, active);
      runs++;
      if (runs === 1) await new Promise<void>((r) => (release = r));
      active--;
    },
  });
  scheduler.start();
  job.wake();
  job.wake();
  release();
  await scheduler.idle();
  expect(maxActive).toBe(1);
  expect(runs).toBe(2);
  await scheduler.stop();
});

test("'again' drains without waiting; errors are logged with the job name, never escape, and back off", async () => {
  const timers = new ManualTimers();
  const lines: Record<string, unknown>[] = [];
  const capture = { error: (o: Record<string, unknown>) => void lines.push(o) } as unknown as typeof logger;
  const scheduler = new Scheduler(capture, timers);
  let left = 3;
  const drained: number[] = [];
  scheduler.add({
    name: 'drain',
    intervalMs: 1000,
    run: () => {
      drained.push(left);
      return --left > 0 ? 'again' : undefined;
    },
  });
  let failures = 0;
  scheduler.add({
    name: 'flaky',
    intervalMs: 100,
    backoffMaxMs: 1000,
    run() {
      failures++;
      throw new Error('boom');
    },
  });
  scheduler.start();
  await scheduler.idle();
  expect(drained).toEqual([3, 2, 1]);
  expect(failures).toBe(1);
  expect(lines[0]).toMatchObject({ job: 'flaky', failures: 1 });
  timers.advance(100); // backoff after one failure is 200 ms: not yet
  await scheduler.idle();
  expect(failures).toBe(1);
  timers.advance(100);
  await scheduler.idle();
  expect(failures).toBe(2);
  await scheduler.stop();
});

test('stop waits for running jobs and stops them in reverse order', async () => {
  const scheduler = new Scheduler(logger, new ManualTimers());
  const stopped: string[] = [];
  for (const name of ['first', 'second']) {
    scheduler.add({
      name,
      intervalMs: 1000,
      async run(signal) {
        await new Promise<void>((r) => signal.addEventListener('abort', () => r()));
        stopped.push(name);
      },
    });
  }
  scheduler.start();
  await scheduler.stop();
  expect(stopped.sort()).toEqual(['first', 'second']);
  expect(() => scheduler.add({ name: 'first', intervalMs: 1, run() {} })).toThrow('Job "first" is scheduled twice');
});
