import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Idempotency } from '../../core/ports/idempotency.ts';
import { DbIdempotency } from './store.ts';

const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

const options = v.object({
  /** Replay window declared in capabilities (the protocol allows 3600..604800). */
  replayTtlSeconds: v.optional(int(3600, 604800), 86400),
  inFlightWaitMs: v.optional(int(0, 120_000), 10_000),
  inFlightLeaseSeconds: v.optional(int(1, 3600), 120),
  pollMs: v.optional(int(1, 1000), 20),
  /** How often expired records are purged (0: never). */
  purgeIntervalSeconds: v.optional(int(0, 86400), 600),
});

const timers = new WeakMap<object, ReturnType<typeof setInterval>>();

/** Principal-scoped idempotency keys stored in the database (replay, conflict, expiry, in-flight). */
export default definePlugin({
  name: 'idempotency',
  provides: [Idempotency],
  requires: [Database],
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  register(ctx) {
    ctx.provide(Idempotency, new DbIdempotency(ctx.get(Database), ctx.get(Clock), ctx.get(Ids), ctx.options));
  },
  start(ctx) {
    const store = ctx.get(Idempotency);
    if (!ctx.options.purgeIntervalSeconds || !(store instanceof DbIdempotency)) return;
    const timer = setInterval(() => {
      store.purge().catch((error) => ctx.logger.warn({ err: error }, 'idempotency purge failed'));
    }, ctx.options.purgeIntervalSeconds * 1000);
    timer.unref?.();
    timers.set(ctx, timer);
  },
  stop(ctx) {
    clearInterval(timers.get(ctx));
  },
});
