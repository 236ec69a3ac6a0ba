import { token } from '../token.ts';

/** Who a verified access token names; standing (organization, tier) is the Auth port's business. */
export interface VerifiedIdentity {
  /** `iss` of the token. */
  issuer: string;
  /** `sub` of the token. */
  subject: string;
  /** Issued by this deployment's own authorization server: `subject` is a user id of the Auth port's users. */
  builtIn: boolean;
  name?: string;
  email?: string;
}

/**
 * OAuth 2.1 resource server side: verifies bearer access tokens (JWTs) against the issuer's keys,
 * audience, lifetime and revocation. `handles` says cheaply whether a credential is this verifier's
 * kind (a JWT), so API keys never reach it. `verify` answers null for anything invalid and never
 * throws for bad input.
 */
export interface TokenVerifierPort {
  /** Issuer identifier (RFC 8414) of the authorization server whose tokens are accepted, as the listen address names it. */
  readonly issuer: string;
  /**
   * The issuer to name to a client that reached this deployment at `base` (a trusted base URL, see
   * lib/urls.ts trustedBaseUrl; null when the Host was not trusted): protected-resource metadata
   * names it. Without a configured public URL, the built-in server answers as whichever loopback
   * name the client used, so discovery and tokens agree whatever that name was.
   */
  issuerFor(base: string | null): string;
  handles(bearer: string): boolean;
  /**
   * The identity of a valid access token for the protected resource at `resource` (a path on this
   * deployment: `/api`, `/sales/mcp`), or null. A token is good only for the resources it was minted
   * for (its `aud`, RFC 8707): the registry's resources (`/api`, `/mcp`) together, each agent mount
   * on its own. Without `resource`, the registry's.
   */
  verify(bearer: string, resource?: string): Promise<VerifiedIdentity | null>;
  /** RFC 9728 metadata URL of a protected resource (`/api`, `/mcp`) on `base`, for 401 challenges. */
  resourceMetadataUrl(base: string, resourcePath: string): string;
  /** The OpenAPI security scheme object describing how clients obtain tokens (oauth2 or openIdConnect). */
  securityScheme(base: string): Record<string, unknown>;
}

export const TokenVerifier = token<TokenVerifierPort>('core.token-verifier');

/** A compact JWS: three base64url segments. */
export function looksLikeJwt(bearer: string): boolean {
  return /^[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]+$/.test(bearer);
}
