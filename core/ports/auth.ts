import { token } from '../token.ts';
import { ProtocolError } from '../errors.ts';

/** Standing of an authenticated caller, lowest first. */
export type Tier = 'public' | 'member' | 'admin';
export const TIERS: readonly Tier[] = ['public', 'member', 'admin'];

export function tierAtLeast(have: Tier, need: Tier): boolean {
  return TIERS.indexOf(have) >= TIERS.indexOf(need);
}

/** Who is calling: an organization (through one of its API keys), a signed-in user (OAuth access token) or a configured test token. */
export interface Principal {
  /** Stable id used to scope idempotency keys, rate limits and ownership. */
  readonly id: string;
  readonly orgId: string;
  readonly orgName: string;
  readonly tier: Tier;
  readonly kind: 'api_key' | 'test_token' | 'oauth';
  readonly userId?: string;
  readonly userName?: string;
}

/**
 * Credential resolution. `authenticate` returns null for an unknown, revoked or malformed
 * credential and never throws for bad input; comparisons are constant-time. One credential
 * always resolves to the same principal id. Resolutions may be cached per instance: a revocation
 * or a change of standing, wherever it was written, takes effect on every instance within a
 * second. Contract: test/contract/auth.contract.ts.
 */
export interface AuthPort {
  /**
   * `resource`: the path of the protected resource the credential is presented to (`/api`, `/sales/mcp`);
   * an OAuth access token is accepted only there if it was minted for it. API keys are not bound to a resource.
   */
  authenticate(bearer: string, resource?: string): Promise<Principal | null>;
}

export const Auth = token<AuthPort>('core.auth');

/** Extract the credential of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/**
 * The one credential resolution every host uses: `Authorization` header -> principal.
 * Missing (when required), malformed or unknown credentials are 401 AUTH_REQUIRED; standing
 * below `tier` is 403 PERMISSION_DENIED. `optional` answers null without a header.
 */
export async function authenticateRequest(
  auth: AuthPort | undefined,
  authorization: string | null | undefined,
  mode: 'optional' | 'required',
  tier?: Tier,
  resource?: string,
): Promise<Principal | null> {
  let principal: Principal | null = null;
  if (authorization) {
    const credential = bearerToken(authorization);
    if (!credential) throw new ProtocolError('AUTH_REQUIRED', 'Authorization header must be "Bearer <token>"');
    principal = auth ? await auth.authenticate(credential, resource) : null;
    if (!principal) throw new ProtocolError('AUTH_REQUIRED', 'Invalid or revoked credential');
  } else if (mode === 'required') {
    throw new ProtocolError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <token>');
  }
  if (tier && principal && !tierAtLeast(principal.tier, tier)) {
    throw new ProtocolError('PERMISSION_DENIED', `This operation requires ${tier} standing`);
  }
  return principal;
}
