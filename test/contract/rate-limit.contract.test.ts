import { ManualClock } from '../../core/ports/clock.ts';
import { RateLimiter } from '../../core/ports/rate-limit.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import { deploy, forEachAdapter } from '../support/deploy.ts';
import { rateLimitContract } from './rate-limit.contract.ts';

// plugins/rate-limit on each adapter: two deployments on one database (one schema), one clock.
forEachAdapter('rate-limit contract', (adapter) =>
  rateLimitContract(`rate-limit [${adapter}]`, async () => {
    const clock = new ManualClock(new Date('2026-06-01T00:00:10Z'));
    const first = await deploy(adapter, [rateLimit({ pruneIntervalMs: 0 })], { clock });
    const second = await deploy(adapter, [rateLimit({ pruneIntervalMs: 0 })], { clock, schema: first.schema! });
    return {
      port: first.deployment.get(RateLimiter),
      other: second.deployment.get(RateLimiter),
      clock,
      async close() {
        await second.close();
        await first.close();
      },
    };
  }),
);
