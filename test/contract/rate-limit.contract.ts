import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { RateLimiterPort } from '../../core/ports/rate-limit.ts';
import type { ManualClock } from '../../core/ports/clock.ts';

export interface RateLimitSubject {
  port: RateLimiterPort;
  /** A second instance sharing the first one's state (another process on the same database). */
  other: RateLimiterPort;
  /** The Clock of both instances. */
  clock: ManualClock;
  close(): Promise<void>;
}

let n = 0;
const newKey = () => `contract:${process.pid}:${Date.now()}:${n++}`;

/** The rate limiter contract (core/ports/rate-limit.ts). */
export function rateLimitContract(name: string, make: () => Promise<RateLimitSubject>): void {
  describe(`rate-limit contract: ${name}`, () => {
    let s: RateLimitSubject;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(async () => {
      await s?.close();
    });

    test('hits on two instances count together: `limit` allowed with the remaining count, then refused with retryAfter', async () => {
      const key = newKey();
      const instances = [s.port, s.other, s.port];
      const decisions = [];
      for (const limiter of instances) decisions.push(await limiter.consume(key, 3, 60));
      expect(decisions).toEqual([
        { allowed: true, retryAfter: 0, remaining: 2 },
        { allowed: true, retryAfter: 0, remaining: 1 },
        { allowed: true, retryAfter: 0, remaining: 0 },
      ]);
      for (const limiter of [s.other, s.port]) {
        const refused = await limiter.consume(key, 3, 60);
        expect(refused.allowed).toBe(false);
        expect(refused.remaining).toBe(0);
        expect(refused.retryAfter).toBeGreaterThanOrEqual(1);
        expect(refused.retryAfter).toBeLessThanOrEqual(60);
      }
    });

    test('concurrent hits on both instances never exceed the limit', async () => {
      const key = newKey();
      const decisions = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? s.other : s.port).consume(key, 5, 60)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
      expect(
        decisions
          .filter((d) => d.allowed)
          .map((d) => d.remaining)
          .sort(),
      ).toEqual([0, 1, 2, 3, 4]);
    });

    test('a refused hit is not counted', async () => {
      const key = newKey();
      for (let i = 0; i < 3; i++) expect((await s.port.consume(key, 3, 60)).allowed).toBe(true);
      for (let i = 0; i < 5; i++) expect((await s.other.consume(key, 3, 60)).allowed).toBe(false);
      // Counted refusals would make this the 9th hit; it is the 4th.
      expect(await s.port.consume(key, 5, 60)).toEqual({ allowed: true, retryAfter: 0, remaining: 1 });
    });

    test('after retryAfter seconds the window has reset and hits are allowed again', async () => {
      const key = newKey();
      expect((await s.port.consume(key, 1, 60)).allowed).toBe(true);
      const refused = await s.other.consume(key, 1, 60);
      expect(refused.allowed).toBe(false);
      s.clock.advance(refused.retryAfter * 1000 - 1000);
      expect((await s.port.consume(key, 1, 60)).allowed).toBe(false);
      s.clock.advance(1000);
      expect(await s.other.consume(key, 1, 60)).toEqual({ allowed: true, retryAfter: 0, remaining: 0 });
    });

    test('keys are independent, and so are two window sizes on one key (a burst and a sustained limit)', async () => {
      // At the top of an hour, where a minute window and an hour window start together.
      const HOUR = 3_600_000;
      s.clock.set(new Date(Math.ceil((s.clock.now().getTime() + 1) / HOUR) * HOUR));
      const [a, b] = [newKey(), newKey()];
      expect((await s.port.consume(a, 1, 60)).allowed).toBe(true);
      expect((await s.port.consume(a, 1, 60)).allowed).toBe(false);
      expect((await s.port.consume(b, 1, 60)).allowed).toBe(true);
      expect(await s.other.consume(a, 2, 3600)).toEqual({ allowed: true, retryAfter: 0, remaining: 1 });
      expect(await s.other.consume(a, 2, 3600)).toEqual({ allowed: true, retryAfter: 0, remaining: 0 });
      expect((await s.port.consume(a, 1, 60)).allowed).toBe(false);
    });
  });
}
