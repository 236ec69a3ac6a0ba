import { token } from '../token.ts';

export interface RateDecision {
  allowed: boolean;
  /** Seconds until the window that refused the request resets (0 when allowed). */
  retryAfter: number;
  remaining: number;
}

/**
 * Shared rate limiting (fixed windows kept in the database, so every instance counts together).
 * `consume` counts one hit against `key` and answers whether it is within `limit` per `windowSeconds`.
 * A refused hit is not counted. One key may be limited over several window sizes at once (a burst
 * and a sustained limit): each size counts separately. After `retryAfter` seconds (Clock port)
 * the refusing window has reset. Contract: test/contract/rate-limit.contract.ts.
 */
export interface RateLimiterPort {
  consume(key: string, limit: number, windowSeconds: number): Promise<RateDecision>;
}

export const RateLimiter = token<RateLimiterPort>('core.rate-limiter');
