import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { ClockPort } from '../../core/ports/clock.ts';

export interface ClockSubject {
  port: ClockPort;
  /** Moves the clock by `ms` when the implementation is test-controlled; absent for real time. */
  advance?(ms: number): void;
  close(): Promise<void>;
}

/** The clock port contract (core/ports/clock.ts): what every consumer of `now()` may rely on. */
export function clockContract(name: string, make: () => Promise<ClockSubject>): void {
  describe(`clock contract: ${name}`, () => {
    let subject: ClockSubject;
    beforeAll(async () => {
      subject = await make();
    });
    afterAll(async () => {
      await subject?.close();
    });

    test('now() is a valid Date, a new object on every call: mutating it never moves the clock', () => {
      const a = subject.port.now();
      expect(a).toBeInstanceOf(Date);
      expect(Number.isNaN(a.getTime())).toBe(false);
      const b = subject.port.now();
      expect(b).not.toBe(a);
      const before = b.getTime();
      b.setTime(0);
      a.setFullYear(1970);
      expect(subject.port.now().getTime()).toBeGreaterThanOrEqual(before);
    });

    test('time never goes backwards between calls', () => {
      let last = subject.port.now().getTime();
      for (let i = 0; i < 1000; i++) {
        const t = subject.port.now().getTime();
        expect(t).toBeGreaterThanOrEqual(last);
        last = t;
      }
    });

    test('now() follows its source: real time between two system readings, or a manual clock exactly as advanced', () => {
      if (!subject.advance) {
        // Real time: now() lies between two readings of the system time taken around it.
        const lo = Date.now();
        const t = subject.port.now().getTime();
        expect(t).toBeGreaterThanOrEqual(lo);
        expect(t).toBeLessThanOrEqual(Date.now());
        return;
      }
      const t0 = subject.port.now().getTime();
      expect(subject.port.now().getTime()).toBe(t0);
      subject.advance(90_000);
      expect(subject.port.now().getTime()).toBe(t0 + 90_000);
    });
  });
}
