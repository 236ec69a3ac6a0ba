import type { ClockPort } from '../../../core/ports/clock.ts';

/**
 * A clock running `factor` times faster than the wall clock from (wallStart -> virtualStart), so
 * separate processes given the same three numbers agree on the time (fault tests: hours of a
 * campaign in seconds).
 */
export function fastClock(virtualStart: number, wallStart: number, factor: number): ClockPort {
  return { now: () => new Date(virtualStart + (Date.now() - wallStart) * factor) };
}
