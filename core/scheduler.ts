import type { Logger } from './log.ts';

/**
 * What a run asks for next: nothing (wait the job's interval), `'again'` (more work is waiting:
 * run again at once, as a drain loop does), or an explicit delay.
 */
export type JobOutcome = undefined | 'again' | { delayMs: number };

export interface JobSpec {
  /** Unique within the deployment (plugins' jobs are prefixed with the plugin name). */
  name: string;
  /** Pause between runs, in milliseconds. */
  intervalMs: number;
  /** First run as soon as the scheduler starts (default) or after one interval. */
  runAtStart?: boolean;
  /** After failed runs, wait interval x 2^failures (capped) instead of the interval. */
  backoffMaxMs?: number;
  /** The work. `signal` aborts when the scheduler stops. Errors are logged with the job name and never escape. */
  run(signal: AbortSignal): Promise<JobOutcome | void> | JobOutcome | void;
}

export interface JobHandle {
  readonly name: string;
  /** Run as soon as possible; coalesces with a run already due and never overlaps a run in progress. */
  wake(): void;
  /** Run now and wait for that run (tests, CLIs); waits for a run in progress first. */
  runNow(): Promise<void>;
}

/** Timer source: real timers in production, {@link ManualTimers} in tests. */
export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realTimers: Timers = {
  set: (fn, ms) => {
    const t = setTimeout(fn, ms);
    (t as { unref?: () => void }).unref?.();
    return t;
  },
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** A test clock for the scheduler: time moves only when `advance` is called. */
export class ManualTimers implements Timers {
  private now = 0;
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();

  set(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { at: this.now + Math.max(0, ms), fn });
    return id;
  }
  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  /** Move time forward, firing due timers in time order (a fired job's next timer may fire too). */
  advance(ms: number): void {
    const target = this.now + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.pending) if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.pending.delete(next[0]);
      this.now = next[1].at;
      next[1].fn();
    }
    this.now = target;
  }
}

class Job implements JobHandle {
  private timer: unknown = null;
  private running: Promise<void> | null = null;
  private rerun = false;
  private failures = 0;
  private started = false;
  private stopped = false;

  constructor(
    private readonly spec: JobSpec,
    private readonly timers: Timers,
    private readonly logger: Logger,
    private readonly abort: AbortController,
  ) {}

  get name() {
    return this.spec.name;
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    if (this.rerun || this.spec.runAtStart !== false) this.wake();
    else this.schedule(this.spec.intervalMs);
  }

  wake(): void {
    if (this.stopped) return;
    if (!this.started || this.running) {
      this.rerun = true;
      return;
    }
    this.clearTimer();
    void this.cycle();
  }

  async runNow(): Promise<void> {
    if (this.running) await this.running;
    if (this.stopped) return;
    this.clearTimer();
    await this.cycle();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    await this.running;
  }

  /** Resolves when no run is in progress. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private cycle(): Promise<void> {
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    let delay = this.spec.intervalMs;
    this.running = (async () => {
      do {
        this.rerun = false;
        let outcome: JobOutcome | void;
        try {
          outcome = await this.spec.run(this.abort.signal);
          this.failures = 0;
        } catch (error) {
          this.failures++;
          this.logger.error({ err: error, job: this.spec.name, failures: this.failures }, 'background job failed');
          outcome = this.spec.backoffMaxMs ? { delayMs: Math.min(this.spec.backoffMaxMs, this.spec.intervalMs * 2 ** Math.min(this.failures, 20)) } : undefined;
        }
        if (outcome === 'again') this.rerun = true;
        delay = outcome && typeof outcome === 'object' ? outcome.delayMs : this.spec.intervalMs;
      } while (this.rerun && !this.stopped);
    })().finally(() => {
      this.running = null;
      if (!this.stopped) this.schedule(delay);
    });
    return this.running;
  }

  private schedule(ms: number): void {
    this.clearTimer();
    this.timer = this.timers.set(() => {
      this.timer = null;
      void this.cycle();
    }, ms);
  }

  private clearTimer(): void {
    if (this.timer !== null) this.timers.clear(this.timer);
    this.timer = null;
  }
}

/**
 * The one place background work runs: named jobs on an interval or woken on demand, never
 * overlapping themselves, errors logged with the job name, stopped in reverse order of start.
 */
export class Scheduler {
  private readonly jobs: Job[] = [];
  private readonly abort = new AbortController();
  private started = false;
  private stopped = false;

  constructor(
    private readonly logger: Logger,
    private readonly timers: Timers = realTimers,
  ) {}

  add(spec: JobSpec): JobHandle {
    if (this.jobs.some((j) => j.name === spec.name)) throw new Error(`Job "${spec.name}" is scheduled twice`);
    if (!(spec.intervalMs > 0)) throw new Error(`Job "${spec.name}": intervalMs must be positive`);
    const job = new Job(spec, this.timers, this.logger, this.abort);
    this.jobs.push(job);
    if (this.started && !this.stopped) job.start();
    return job;
  }

  /** Job names, in the order they were added. */
  list(): string[] {
    return this.jobs.map((j) => j.name);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const job of this.jobs) job.start();
  }

  /** Resolves when no job is running (tests with {@link ManualTimers}). */
  async idle(): Promise<void> {
    for (const job of this.jobs) await job.idle();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    for (const job of [...this.jobs].reverse()) await job.stop();
  }
}

/** The scheduler as a plugin sees it: job names are prefixed with the plugin's name. */
export interface PluginScheduler {
  add(spec: JobSpec): JobHandle;
}
