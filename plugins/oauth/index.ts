import * as v from 'valibot';
import type { JWK } from 'jose';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Http } from '../../core/http.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { RateLimiter } from '../../core/ports/rate-limit.ts';
import { TokenVerifier } from '../../core/ports/token-verifier.ts';
import { ALG, createKeyStore } from './keys.ts';
import { createVerifier, PROTECTED_RESOURCE_PREFIX } from './verifier.ts';
import { authorizationServer } from './server.ts';
import { discoverIssuer } from './external.ts';
import { grantRevoked } from './store.ts';
import { LiveGrants } from './live-grants.ts';

export { findLogin, setPassword } from './store.ts';

const seconds = (min: number, max: number, fallback: number) => v.optional(v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max)), fallback);

const options = v.object({
  /**
   * An external OpenID Connect / OAuth issuer (`https://login.example.com`) whose access tokens
   * are accepted instead of running the built-in authorization server.
   */
  issuer: v.optional(v.pipe(v.string(), v.url('must be a URL'))),
  /** Audiences accepted besides this deployment's resource URLs (an external issuer's API identifier). */
  audiences: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), []),
  /** Signing algorithms accepted from an external issuer. */
  algorithms: v.optional(v.array(v.picklist(['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'])), ['RS256', 'ES256', 'PS256', 'EdDSA']),
  /** Protected resources (paths on this deployment): `/api` is the REST API, `/mcp` the agent-tool endpoint. */
  resources: v.optional(v.array(v.pipe(v.string(), v.regex(/^\/[A-Za-z0-9/_-]*$/, 'must be an absolute path'))), ['/api', '/mcp']),
  accessTokenSeconds: seconds(60, 3600, 600),
  refreshTokenSeconds: seconds(3600, 90 * 86_400, 30 * 86_400),
  codeSeconds: seconds(10, 600, 60),
  scopes: v.optional(v.array(v.pipe(v.string(), v.regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/))), ['registry']),
  /** How long an external issuer's JWKS is used before it is fetched again. */
  jwksTtlSeconds: seconds(60, 86_400, 600),
});

/**
 * OAuth 2.1 for the registry: a resource server (JWT access tokens, JWKS cached and re-read on
 * rotation, audience = this deployment's resources, so one token serves the REST API and /mcp)
 * with RFC 9728 protected-resource metadata, and either the built-in authorization server
 * (RFC 8414 metadata, RFC 7591 registration, code + PKCE S256, rotating refresh tokens with reuse
 * detection, revocation; users from the admin CLI) or an external issuer (`OAUTH_ISSUER`).
 * The Auth port consults the TokenVerifier this plugin provides; standing stays with the Auth port.
 */
export default definePlugin({
  name: 'oauth',
  provides: [TokenVerifier],
  deps: { db: Database, clock: Clock, ids: Ids, http: Http, secrets: SecretBox, crawler: optional(Crawler), limiter: optional(RateLimiter) },
  options,
  env: { OAUTH_ISSUER: 'issuer', OAUTH_AUDIENCES: { path: 'audiences', type: 'csv' }, OAUTH_ACCESS_TOKEN_SECONDS: { path: 'accessTokenSeconds', type: 'int' } },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, ids, http, secrets, crawler, limiter }, kernel) {
    const o = kernel.options;
    const { publicUrl, port } = kernel.config.server;
    if (!publicUrl) kernel.logger.warn({ port }, 'oauth: PUBLIC_URL is not set; tokens name http://localhost:<port> as issuer and audience');
    const base = (publicUrl ?? `http://localhost:${port}`).replace(/\/+$/, '');
    const resources = o.resources.map((r) => base + r);
    const builtIn = !o.issuer;
    const issuer = (o.issuer ?? base).replace(/\/+$/, '');
    const keys = createKeyStore(db, secrets, clock);

    let external: ReturnType<typeof discoverIssuer> | null = null;
    if (!builtIn) {
      if (!crawler) throw new Error('oauth: an external issuer needs the crawler (its keys are fetched through the SSRF guard)');
      external = discoverIssuer(crawler, issuer, o.jwksTtlSeconds * 1000, clock);
    }
    const grants = new LiveGrants();
    const verifier = createVerifier({
      issuer,
      audiences: [...resources, ...o.audiences],
      algorithms: builtIn ? [ALG] : o.algorithms,
      keys: builtIn ? (fresh) => keys.jwks(fresh ? 0 : 60_000) : (fresh) => external!.jwks(fresh) as Promise<{ keys: JWK[] }>,
      clock,
      logger: kernel.logger,
      builtIn,
      grantRevoked: (id) => grants.revoked(id, (grantId) => grantRevoked(db, grantId)),
    });
    const scopes = Object.fromEntries(o.scopes.map((x) => [x, x === 'registry' ? 'Act on the registry as the signed-in user' : x]));
    kernel.provide(TokenVerifier, {
      ...verifier,
      securityScheme: () =>
        builtIn
          ? {
              type: 'oauth2',
              description: 'OAuth 2.1 user sign-in (authorization code + PKCE S256; dynamic client registration at /register)',
              flows: { authorizationCode: { authorizationUrl: `${issuer}/authorize`, tokenUrl: `${issuer}/token`, refreshUrl: `${issuer}/token`, scopes } },
            }
          : {
              type: 'openIdConnect',
              description: 'OAuth 2.1 user sign-in with the configured issuer',
              openIdConnectUrl: `${issuer}/.well-known/openid-configuration`,
            },
    });

    // RFC 9728: one metadata document per protected resource.
    for (const [i, path] of o.resources.entries()) {
      const doc = {
        resource: resources[i],
        authorization_servers: [issuer],
        bearer_methods_supported: ['header'],
        scopes_supported: o.scopes,
        resource_name: path === '/mcp' ? 'Registry agent tools (MCP)' : 'Registry REST API',
      };
      http.add({
        method: 'GET',
        path: PROTECTED_RESOURCE_PREFIX + path,
        handle: () => Response.json(doc, { headers: { 'cache-control': 'public, max-age=3600' } }),
      });
    }
    if (builtIn) {
      http.add(
        ...authorizationServer(
          {
            issuer,
            resources,
            accessTokenSeconds: o.accessTokenSeconds,
            refreshTokenSeconds: o.refreshTokenSeconds,
            codeSeconds: o.codeSeconds,
            scopes: o.scopes,
          },
          { db, clock, ids, keys, limiter, logger: kernel.logger, accessClaims: (t) => verifier.claims(t), revoked: (id) => grants.forget(id) },
        ),
      );
    }
    let unfollow: (() => Promise<void>) | undefined;
    return {
      async start() {
        if (!builtIn) return;
        await keys.ensure();
        unfollow = await grants.follow(db, kernel.logger);
      },
      stop: () => unfollow?.(),
    };
  },
});
