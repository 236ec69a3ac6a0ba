import { token } from '../token.ts';

/** Injected time, so tests can move it. */
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
