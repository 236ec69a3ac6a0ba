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
import { trustedBaseUrl } from '../../lib/urls.ts';
import { ALG, createKeyStore } from './keys.ts';
import { createVerifier, PROTECTED_RESOURCE_PREFIX } from './verifier.ts';
import { authorizationServer } from './server.ts';
import { discoverIssuer } from './external.ts';
import { grantRevoked } from './store.ts';
import { LiveGrants } from './live-grants.ts';

export { findLogin, setPassword } from './store.ts';

/** The listen address as a URL host: a wildcard address is reached on loopback. */
function listenHost(host: string): string {
  if (host === '0.0.0.0' || host === '' || host === '::' || host === '[::]') return '127.0.0.1';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** A resource URL split into origin and path (trailing slashes dropped); null with a query, fragment or credentials. */
function parseResource(value: string): { origin: string; path: string } | null {
  if (value.length > 2000 || /[\u0000-\u0020\u007f]/.test(value)) return null;
  try {
    const u = new URL(value);
    if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.search || u.hash || u.username || u.password) return null;
    return { origin: u.origin, path: u.pathname.replace(/\/+$/, '') };
  } catch {
    return null;
  }
}

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
 * OAuth 2.1 for the registry and agents: a resource server (JWT access tokens, JWKS cached and re-read
 * on rotation, audience = the resources a token was requested for: the registry's `/api` + `/mcp`
 * together, each agent mount alone)
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
    const server = kernel.config.server;
    const { publicUrl, port } = server;
    // Where this deployment is reached. With PUBLIC_URL, that and nothing else. Without it (local
    // development), the listen address the start-up log prints, and besides it whichever loopback
    // name (or the configured listen host) a client used, by the rule agent cards already follow
    // (lib/urls.ts trustedBaseUrl): `localhost`, `127.0.0.1` and `[::1]` are the same server with the
    // same keys, so naming the one the client used costs nothing, and oauth4webapi and the MCP SDK,
    // which compare the issuer and resource with the URL they started from, work with any of them.
    // An untrusted Host is never echoed: it gets the listen address.
    const listenBase = publicUrl ? publicUrl.replace(/\/+$/, '') : `http://${listenHost(server.host)}:${port}`;
    if (!publicUrl)
      kernel.logger.warn({ base: listenBase }, 'oauth: PUBLIC_URL is not set; the issuer and resources follow the loopback host name a client uses');
    const baseFor = (base: string | null) => (publicUrl || base === null ? listenBase : base);
    const baseOfRequest = (request: Request) => baseFor(trustedBaseUrl(server, request));
    const ownBase = (origin: string): boolean => {
      if (origin === listenBase) return true;
      if (publicUrl) return false;
      try {
        return trustedBaseUrl(server, new Request(`${origin}/`)) === origin;
      } catch {
        return false;
      }
    };
    const builtIn = !o.issuer;
    const externalIssuer = o.issuer?.replace(/\/+$/, '');
    const issuerFor = (base: string | null) => externalIssuer ?? baseFor(base);
    const keys = createKeyStore(db, secrets, clock);

    // Protected resources: the registry's (`/api`, `/mcp`, one audience group: a registry token serves
    // both) and every other resource this deployment publishes RFC 9728 metadata for (agent mounts,
    // each its own audience). Read from the routes once assembly is done.
    const registryPaths = new Set(o.resources);
    let published: Set<string> | null = null;
    const protectedPaths = () =>
      (published ??= new Set([
        ...o.resources,
        ...http
          .list()
          .filter((r) => r.method === 'GET' && r.path.startsWith(PROTECTED_RESOURCE_PREFIX))
          .map((r) => r.path.slice(PROTECTED_RESOURCE_PREFIX.length))
          .filter((p) => p === '' || p.startsWith('/')),
      ]));
    /** A resource indicator (RFC 8707) naming one of our protected resources, normalized; else null. */
    const ownResource = (value: string): { url: string; path: string } | null => {
      const r = parseResource(value);
      return r && ownBase(r.origin) && protectedPaths().has(r.path) ? { url: r.origin + r.path, path: r.path } : null;
    };
    const audienceFits = (audiences: readonly string[], resource: string | undefined) => {
      if (audiences.some((a) => o.audiences.includes(a))) return true;
      const path = resource?.replace(/\/+$/, '');
      const group = path === undefined || registryPaths.has(path) ? registryPaths : new Set([path]);
      return audiences.some((a) => {
        const r = parseResource(a);
        return !!r && group.has(r.path) && ownBase(r.origin);
      });
    };

    let external: ReturnType<typeof discoverIssuer> | null = null;
    if (!builtIn) {
      if (!crawler) throw new Error('oauth: an external issuer needs the crawler (its keys are fetched through the SSRF guard)');
      external = discoverIssuer(crawler, externalIssuer!, o.jwksTtlSeconds * 1000, clock);
    }
    const grants = new LiveGrants();
    const verifier = createVerifier({
      issuer: externalIssuer ?? listenBase,
      ownIssuer: (iss) => (externalIssuer ? iss === externalIssuer : ownBase(iss)),
      audienceFits,
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
      issuerFor,
      securityScheme: (base) => {
        const issuer = issuerFor(base && /^https?:\/\//.test(base) ? base.replace(/\/+$/, '') : null);
        return builtIn
          ? {
              type: 'oauth2',
              description: 'OAuth 2.1 user sign-in (authorization code + PKCE S256; dynamic client registration at /register)',
              flows: { authorizationCode: { authorizationUrl: `${issuer}/authorize`, tokenUrl: `${issuer}/token`, refreshUrl: `${issuer}/token`, scopes } },
            }
          : {
              type: 'openIdConnect',
              description: 'OAuth 2.1 user sign-in with the configured issuer',
              openIdConnectUrl: `${issuer}/.well-known/openid-configuration`,
            };
      },
    });

    // RFC 9728: one metadata document per protected resource, naming the host the client used.
    for (const path of o.resources) {
      http.add({
        method: 'GET',
        path: PROTECTED_RESOURCE_PREFIX + path,
        handle(request) {
          const base = baseOfRequest(request);
          const doc = {
            resource: base + path,
            authorization_servers: [issuerFor(base)],
            bearer_methods_supported: ['header'],
            scopes_supported: o.scopes,
            resource_name: path === '/mcp' ? 'Registry agent tools (MCP)' : 'Registry REST API',
          };
          return Response.json(doc, { headers: { 'cache-control': 'public, max-age=3600', vary: 'host' } });
        },
      });
    }
    if (builtIn) {
      if (!limiter) throw new Error('oauth: the built-in authorization server needs the rate-limit plugin (sign-in and registration throttling)');
      http.add(
        ...authorizationServer(
          {
            issuerFor: (request) => baseOfRequest(request),
            defaultResources: (request) => o.resources.map((p) => baseOfRequest(request) + p),
            ownResource: (value) => ownResource(value)?.url ?? null,
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
