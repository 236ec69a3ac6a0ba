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

/** Principal-scoped idempotency keys stored in the database (replay, conflict, expiry, in-flight). */
export default definePlugin({
  name: 'idempotency',
  provides: [Idempotency],
  deps: { db: Database, clock: Clock, ids: Ids },
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, ids }, kernel) {
    const store = new DbIdempotency(db, clock, ids, kernel.options);
    kernel.provide(Idempotency, store);
    if (kernel.options.purgeIntervalSeconds) {
      kernel.scheduler.add({
        name: 'purge',
        intervalMs: kernel.options.purgeIntervalSeconds * 1000,
        runAtStart: false,
        run: async () => void (await store.purge()),
      });
    }
  },
});
