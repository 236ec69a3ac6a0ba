import { token } from '../token.ts';

/** Standing of an authenticated caller, lowest first. */
export type Tier = 'public' | 'member' | 'admin';
export const TIERS: readonly Tier[] = ['public', 'member', 'admin'];

export function tierAtLeast(have: Tier, need: Tier): boolean {
  return TIERS.indexOf(have) >= TIERS.indexOf(need);
}

/** Who is calling: an organization (through one of its API keys) or a configured test token. */
export interface Principal {
  /** Stable id used to scope idempotency keys, rate limits and ownership. */
  readonly id: string;
  readonly orgId: string;
  readonly orgName: string;
  readonly tier: Tier;
  readonly kind: 'api_key' | 'test_token';
  readonly userId?: string;
  readonly userName?: string;
}

/**
 * Credential resolution. `authenticate` returns null for an unknown, revoked or malformed
 * credential and never throws for bad input; comparisons are constant-time.
 */
export interface AuthPort {
  authenticate(bearer: string): Promise<Principal | null>;
}

export const Auth = token<AuthPort>('core.auth');

/** Extract the credential of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}
