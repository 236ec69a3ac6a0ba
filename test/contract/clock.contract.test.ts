import { Clock, ManualClock } from '../../core/ports/clock.ts';
import { deploy } from '../support/deploy.ts';
import { clockContract } from './clock.contract.ts';

// The kernel's default binding (system time) and the ManualClock tests bind through `overrides`.
clockContract('systemClock (kernel default)', async () => {
  const d = await deploy(null, []);
  return { port: d.deployment.get(Clock), close: () => d.close() };
});

clockContract('ManualClock (override)', async () => {
  const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
  const d = await deploy(null, [], { clock });
  const port = d.deployment.get(Clock);
  return { port, advance: (ms) => clock.advance(ms), close: () => d.close() };
});
