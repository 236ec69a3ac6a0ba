import { createLocalJWKSet, errors, jwtVerify, type JWK, type JWTPayload } from 'jose';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { Logger } from '../../core/log.ts';
import { looksLikeJwt, type TokenVerifierPort, type VerifiedIdentity } from '../../core/ports/token-verifier.ts';

export const PROTECTED_RESOURCE_PREFIX = '/.well-known/oauth-protected-resource';

/** Where the issuer's public keys come from; `fresh` asks for a reload (an unknown kid: rotation). */
export type KeySource = (fresh: boolean) => Promise<{ keys: JWK[] }>;

export interface VerifierOptions {
  issuer: string;
  /** Audiences accepted: this deployment's resources (`<base>/api`, `<base>/mcp`) and configured extras. */
  audiences: readonly string[];
  algorithms: readonly string[];
  keys: KeySource;
  clock: ClockPort;
  logger: Logger;
  builtIn: boolean;
  /** Built-in tokens carry their grant (`sid`); a revoked grant revokes its access tokens at once. */
  grantRevoked?: (grantId: string) => Promise<boolean>;
  /** Least time between two reloads caused by unknown key ids. */
  refetchCooldownMs?: number;
}

/**
 * Resource-server verification of JWT access tokens: signature against the issuer's JWKS (cached;
 * an unknown `kid` reloads it at most once per cooldown, so rotation is picked up and junk kids
 * cannot hammer the issuer), `iss`, `aud` (one of ours), `exp`/`nbf` against the Clock port.
 */
export function createVerifier(o: VerifierOptions): Omit<TokenVerifierPort, 'securityScheme'> & { claims(token: string): Promise<JWTPayload | null> } {
  const cooldown = o.refetchCooldownMs ?? 30_000;
  let lastReload = 0;
  let keySet: ReturnType<typeof createLocalJWKSet> | null = null;
  const load = async (fresh: boolean) => (keySet = createLocalJWKSet(await o.keys(fresh)));

  const verifyOnce = async (token: string) =>
    jwtVerify(token, keySet ?? (await load(false)), {
      issuer: o.issuer,
      audience: [...o.audiences],
      algorithms: [...o.algorithms],
      currentDate: o.clock.now(),
      requiredClaims: ['exp', 'sub'],
    });

  const claims = async (token: string): Promise<JWTPayload | null> => {
    if (!looksLikeJwt(token)) return null;
    let payload: JWTPayload;
    try {
      try {
        payload = (await verifyOnce(token)).payload;
      } catch (error) {
        const now = o.clock.now().getTime();
        if (!(error instanceof errors.JWKSNoMatchingKey) || now - lastReload < cooldown) throw error;
        lastReload = now;
        await load(true);
        payload = (await verifyOnce(token)).payload;
      }
    } catch (error) {
      if (!(error instanceof errors.JOSEError) && !(error instanceof TypeError)) o.logger.warn({ err: error }, 'access token verification failed');
      return null;
    }
    return typeof payload.sub === 'string' && payload.sub ? payload : null;
  };

  return {
    issuer: o.issuer,
    handles: looksLikeJwt,
    claims,
    async verify(token: string): Promise<VerifiedIdentity | null> {
      const payload = await claims(token);
      if (!payload) return null;
      if (o.builtIn) {
        const sid = payload.sid;
        if (typeof sid !== 'string' || !o.grantRevoked || (await o.grantRevoked(sid))) return null;
      }
      return {
        issuer: o.issuer,
        subject: payload.sub!,
        builtIn: o.builtIn,
        ...(typeof payload.name === 'string' ? { name: payload.name } : {}),
        ...(typeof payload.email === 'string' ? { email: payload.email } : {}),
      };
    },
    resourceMetadataUrl: (base, resourcePath) => `${base.replace(/\/+$/, '')}${PROTECTED_RESOURCE_PREFIX}${resourcePath}`,
  };
}
