import { token } from '../token.ts';

/**
 * Injected time, so tests can move it. Contract (test/contract/clock.contract.ts): `now()` returns
 * a new Date on every call (callers may keep or mutate it without moving the clock).
 * `systemClock` is wall time; a ManualClock moves only through `set` and `advance`.
 */
export interface ClockPort {
  now(): Date;
}

export const Clock = token<ClockPort>('core.clock');

export const systemClock: ClockPort = { now: () => new Date() };

/** A clock tests control. */
export class ManualClock implements ClockPort {
  constructor(private current = new Date()) {}
  now(): Date {
    return new Date(this.current.getTime());
  }
  set(date: Date): void {
    this.current = new Date(date.getTime());
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}
