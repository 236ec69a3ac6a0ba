import { createLocalJWKSet, errors, jwtVerify, type JWK, type JWTPayload } from 'jose';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { Logger } from '../../core/log.ts';
import { looksLikeJwt, type TokenVerifierPort, type VerifiedIdentity } from '../../core/ports/token-verifier.ts';

export const PROTECTED_RESOURCE_PREFIX = '/.well-known/oauth-protected-resource';

/** Where the issuer's public keys come from; `fresh` asks for a reload (an unknown kid: rotation). */
export type KeySource = (fresh: boolean) => Promise<{ keys: JWK[] }>;

export interface VerifierOptions {
  /** The issuer named by default (listen address, public URL or the external issuer). */
  issuer: string;
  /** Whether `iss` names this deployment's authorization server (several loopback names may, see index.ts). */
  ownIssuer: (iss: string) => boolean;
  /** Whether a token whose `aud` is `audiences` may be presented to `resource` (a path; undefined: the registry's). */
  audienceFits: (audiences: readonly string[], resource: string | undefined) => boolean;
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
export function createVerifier(
  o: VerifierOptions,
): Omit<TokenVerifierPort, 'securityScheme' | 'issuerFor'> & { claims(token: string): Promise<JWTPayload | null> } {
  const cooldown = o.refetchCooldownMs ?? 30_000;
  let lastReload = 0;
  let keySet: ReturnType<typeof createLocalJWKSet> | null = null;
  const load = async (fresh: boolean) => (keySet = createLocalJWKSet(await o.keys(fresh)));

  // `iss` and `aud` are checked below: several issuer names, and audiences depend on the resource.
  const verifyOnce = async (token: string) =>
    jwtVerify(token, keySet ?? (await load(false)), {
      algorithms: [...o.algorithms],
      currentDate: o.clock.now(),
      requiredClaims: ['exp', 'sub', 'iss', 'aud'],
    });

  /** Claims of a token of our issuer with a valid signature and lifetime, whatever its audience. */
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
    if (typeof payload.iss !== 'string' || !o.ownIssuer(payload.iss)) return null;
    return typeof payload.sub === 'string' && payload.sub ? payload : null;
  };
  const audiences = (payload: JWTPayload): string[] =>
    typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud.filter((a) => typeof a === 'string') : [];

  return {
    issuer: o.issuer,
    handles: looksLikeJwt,
    claims,
    async verify(token: string, resource?: string): Promise<VerifiedIdentity | null> {
      const payload = await claims(token);
      if (!payload || !o.audienceFits(audiences(payload), resource)) return null;
      if (o.builtIn) {
        const sid = payload.sid;
        if (typeof sid !== 'string' || !o.grantRevoked || (await o.grantRevoked(sid))) return null;
      }
      return {
        // The configured name, so identities link the same whichever loopback name minted the token.
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
