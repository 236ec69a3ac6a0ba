import { Database } from '../../core/ports/database.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import { Idempotency } from '../../core/ports/idempotency.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { idempotencyContract } from './idempotency.contract.ts';

// plugins/idempotency on each adapter; duplicates of in-flight requests answer at once (no wait).
forEachAdapter('idempotency contract', (adapter) =>
  idempotencyContract(`idempotency [${adapter}]`, async () => {
    const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
    const leaseSeconds = 120;
    const d = await deploy(adapter, [idempotency({ inFlightWaitMs: 0, inFlightLeaseSeconds: leaseSeconds, purgeIntervalSeconds: 0 })], { clock });
    return { port: d.deployment.get(Idempotency), db: d.deployment.get(Database), clock, leaseSeconds, close: () => d.close() };
  }),
);
