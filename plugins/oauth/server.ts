import * as v from 'valibot';
import { SignJWT, type JWTPayload } from 'jose';
import { sql } from '../../core/sql.ts';
import type { HttpRoute } from '../../core/http.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { RateLimiterPort } from '../../core/ports/rate-limit.ts';
import type { Logger } from '../../core/log.ts';
import { readCapped } from '../../lib/streams.ts';
import { findUnsafeInput } from '../../core/validation.ts';
import { ALG, type KeyStore } from './keys.ts';
import { errorPage, signInPage } from './page.ts';
import * as store from './store.ts';

export interface ServerSettings {
  /** The issuer identifier as the client reached this deployment (see index.ts). */
  issuerFor(request: Request): string;
  /** The `aud` of a token whose authorization request named no resource: the registry's resources, on the client's host. */
  defaultResources(request: Request): string[];
  /** A resource indicator (RFC 8707) naming a protected resource of this deployment, normalized; else null. */
  ownResource(value: string): string | null;
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
  codeSeconds: number;
  scopes: readonly string[];
}

export interface ServerDeps {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  keys: KeyStore;
  /** Counts registrations and sign-in attempts (required: the built-in server is never unthrottled). */
  limiter: RateLimiterPort;
  logger: Logger;
  /** Claims of a valid access token of this issuer (signature, audience, lifetime checked), else null. */
  accessClaims(token: string): Promise<JWTPayload | null>;
  /** A grant was revoked and committed: forget it at once here (other instances learn through NOTIFY). */
  revoked(grantId: string): void;
}

const FORM_MAX = 16 * 1024;
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  ...NO_STORE,
};

/** RFC 6749 error answer. */
const oauthError = (status: number, error: string, description: string, headers: Record<string, string> = {}) =>
  Response.json({ error, error_description: description }, { status, headers: { ...NO_STORE, ...headers } });

const loopback = (host: string) => host === 'localhost' || host === '127.0.0.1' || host === '[::1]';

/** C0 controls and DEL: the URL parser silently drops tabs and line breaks, so a URI holding them is not the one registered. */
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Redirect URIs: https, or http on a loopback host (native apps, RFC 8252); no fragment, no control characters. */
const redirectUri = v.pipe(
  v.string('must be a string'),
  v.maxLength(2000),
  v.check((s) => !CONTROL.test(s), 'must not contain control characters'),
  v.check((s) => {
    try {
      const u = new URL(s);
      return !u.hash && (u.protocol === 'https:' || (u.protocol === 'http:' && loopback(u.hostname)));
    } catch {
      return false;
    }
  }, 'must be an https URL (or http on localhost) without a fragment'),
);

const registration = v.object({
  redirect_uris: v.pipe(v.array(redirectUri, 'must be an array of URLs'), v.minLength(1, 'must list at least one URI'), v.maxLength(10)),
  client_name: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200),
      v.check((s) => !CONTROL.test(s), 'must not contain control characters'),
    ),
  ),
  token_endpoint_auth_method: v.optional(
    v.picklist(['none', 'client_secret_basic', 'client_secret_post'], 'must be none, client_secret_basic or client_secret_post'),
  ),
  grant_types: v.optional(
    v.pipe(v.array(v.picklist(['authorization_code', 'refresh_token'], 'only authorization_code and refresh_token are supported')), v.minLength(1)),
  ),
  response_types: v.optional(v.array(v.picklist(['code'], 'only code is supported'))),
  scope: v.optional(v.pipe(v.string(), v.maxLength(500))),
});

async function readForm(request: Request): Promise<URLSearchParams | null> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) return null;
  const bytes = await readCapped(request.body, FORM_MAX);
  return bytes ? new URLSearchParams(new TextDecoder().decode(bytes)) : null;
}

/**
 * The edge input rule (core/validation.ts) for form and query parameters: no NUL, no lone
 * surrogate, in names or values. Returns `name: problem` for the first offender, or null.
 */
export function unsafeParams(params: URLSearchParams): string | null {
  for (const [name, value] of params) {
    const found = findUnsafeInput({ [name]: value });
    if (found) return found.path.length ? `${name}: ${found.problem}` : `a parameter name ${found.problem.replace(/^has a key that /, '')}`;
  }
  return null;
}

/** base64url(SHA-256(verifier)) === challenge (PKCE S256). */
function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  const computed = new Bun.CryptoHasher('sha256').update(verifier).digest('base64url');
  return computed === challenge;
}

/** The built-in authorization server: RFC 8414 metadata, RFC 7591 registration, authorization code + PKCE, tokens, revocation. */
export function authorizationServer(s: ServerSettings, d: ServerDeps): HttpRoute[] {
  const nowSeconds = () => Math.floor(d.clock.now().getTime() / 1000);

  const limited = async (key: string, limit: number, windowSeconds: number) => {
    const decision = await d.limiter.consume(key, limit, windowSeconds);
    return decision.allowed ? null : decision.retryAfter;
  };

  /** The resources a request names (RFC 8707), normalized and deduplicated; null when one is not ours. */
  const requestedResources = (values: string[]): string[] | null => {
    const out: string[] = [];
    for (const value of values) {
      const own = s.ownResource(value);
      if (!own) return null;
      if (!out.includes(own)) out.push(own);
    }
    return out.length > 10 ? null : out;
  };
  const invalidTarget = 'resource must name a protected resource of this deployment (a URL its RFC 9728 metadata names)';

  /** Validate an authorization request (query of GET, form of POST). Errors before the redirect URI is trusted are shown, not redirected. */
  async function authorizationRequest(params: URLSearchParams, issuer: string) {
    const clientId = params.get('client_id') ?? '';
    const client = clientId ? await store.findClient(d.db, clientId) : null;
    if (!client) return { kind: 'fatal', message: 'Unknown client_id: register the client first.' } as const;
    const redirect = params.get('redirect_uri') ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0]! : '');
    if (!client.redirect_uris.includes(redirect)) return { kind: 'fatal', message: 'redirect_uri is not one the client registered.' } as const;
    const state = params.get('state');
    const fail = (error: string, description: string) => {
      const url = new URL(redirect);
      url.searchParams.set('error', error);
      url.searchParams.set('error_description', description);
      if (state !== null) url.searchParams.set('state', state);
      url.searchParams.set('iss', issuer);
      return { kind: 'redirect', url: url.toString() } as const;
    };
    if (params.get('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
    const challenge = params.get('code_challenge') ?? '';
    if (params.get('code_challenge_method') !== 'S256') return fail('invalid_request', 'PKCE with code_challenge_method=S256 is required');
    if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
    const resources = requestedResources(params.getAll('resource'));
    if (!resources) return fail('invalid_target', invalidTarget);
    const scope = params.get('scope');
    if (scope?.split(' ').some((x) => x && !s.scopes.includes(x))) return fail('invalid_scope', `supported scopes: ${s.scopes.join(' ')}`);
    const carried: [string, string][] = [
      ['response_type', 'code'],
      ['client_id', clientId],
      ['redirect_uri', redirect],
      ['code_challenge', challenge],
      ['code_challenge_method', 'S256'],
    ];
    if (state !== null) carried.push(['state', state]);
    if (scope) carried.push(['scope', scope]);
    for (const r of resources) carried.push(['resource', r]);
    return { kind: 'ok', client, redirect, state, scope: scope || null, carried, challenge, resources } as const;
  }

  const page = (html: string, status = 200) => new Response(html, { status, headers: PAGE_HEADERS });

  async function mintTokens(issuer: string, clientId: string, userId: string, grantId: string, scope: string | null, audience: string[]) {
    const key = await d.keys.signingKey();
    const now = nowSeconds();
    const access = await new SignJWT({ client_id: clientId, sid: grantId, ...(scope ? { scope } : {}) })
      .setProtectedHeader({ alg: ALG, kid: key.kid, typ: 'at+jwt' })
      .setIssuer(issuer)
      .setSubject(userId)
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(now + s.accessTokenSeconds)
      .setJti(d.ids.uuid4())
      .sign(key.key);
    const refresh = store.randomToken();
    await store.insertRefreshToken(d.db, {
      token: refresh,
      grantId,
      expiresAt: new Date((now + s.refreshTokenSeconds) * 1000),
      now: d.clock.now(),
    });
    return Response.json(
      {
        access_token: access,
        token_type: 'Bearer',
        expires_in: s.accessTokenSeconds,
        refresh_token: refresh,
        ...(scope ? { scope } : {}),
      },
      { headers: NO_STORE },
    );
  }

  /** Client authentication (RFC 6749 2.3.1): Basic, form secret, or none for public clients. */
  async function authenticateClient(request: Request, form: URLSearchParams): Promise<store.Client | Response> {
    let clientId = form.get('client_id');
    let secret = form.get('client_secret');
    let method: store.Client['token_endpoint_auth_method'] = secret ? 'client_secret_post' : 'none';
    const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(request.headers.get('authorization') ?? '');
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) return oauthError(401, 'invalid_client', 'Malformed Basic credentials', { 'www-authenticate': 'Basic' });
      try {
        clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
        secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
      } catch {
        return oauthError(401, 'invalid_client', 'Malformed Basic credentials', { 'www-authenticate': 'Basic' });
      }
      method = 'client_secret_basic';
    }
    const client = clientId ? await store.findClient(d.db, clientId) : null;
    if (!client) return oauthError(401, 'invalid_client', 'Unknown client', basic ? { 'www-authenticate': 'Basic' } : {});
    if (client.token_endpoint_auth_method === 'none') return client;
    const expected = client.secret_hash ? Buffer.from(client.secret_hash) : null;
    const ok = method !== 'none' && secret !== null && expected !== null && crypto.timingSafeEqual(store.digest(secret), expected);
    if (!ok) return oauthError(401, 'invalid_client', 'Client authentication failed', basic ? { 'www-authenticate': 'Basic' } : {});
    return client;
  }

  const metadata = (issuer: string) => ({
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    revocation_endpoint: `${issuer}/revoke`,
    jwks_uri: `${issuer}/oauth/jwks.json`,
    scopes_supported: [...s.scopes],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    authorization_response_iss_parameter_supported: true,
  });

  return [
    {
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      handle: (request) => Response.json(metadata(s.issuerFor(request)), { headers: { 'cache-control': 'public, max-age=3600', vary: 'host' } }),
    },
    {
      method: 'GET',
      path: '/oauth/jwks.json',
      handle: async () => Response.json(await d.keys.jwks(), { headers: { 'cache-control': 'public, max-age=300' } }),
    },
    {
      method: 'POST',
      path: '/register',
      async handle(request, ctx) {
        const retry = await limited(`oauth.register:${ctx.ip}`, 30, 3600);
        if (retry) return oauthError(429, 'slow_down', 'Too many registrations', { 'retry-after': String(retry) });
        if (!/^application\/json\b/i.test(request.headers.get('content-type') ?? ''))
          return oauthError(415, 'invalid_client_metadata', 'Send application/json');
        const bytes = await readCapped(request.body, FORM_MAX);
        if (!bytes) return oauthError(413, 'invalid_client_metadata', `Body exceeds ${FORM_MAX} bytes`);
        let raw: unknown;
        try {
          raw = JSON.parse(new TextDecoder().decode(bytes));
        } catch {
          return oauthError(400, 'invalid_client_metadata', 'Malformed JSON');
        }
        const unsafe = findUnsafeInput(raw);
        if (unsafe) {
          const field = unsafe.path.join('.');
          const code = field.startsWith('redirect_uris') ? 'invalid_redirect_uri' : 'invalid_client_metadata';
          return oauthError(400, code, `${field || 'body'}: ${unsafe.problem}`);
        }
        const parsed = v.safeParse(registration, raw);
        if (!parsed.success) {
          const issue = parsed.issues[0];
          const field = issue.path?.map((p) => p.key).join('.') ?? '';
          const code = field.startsWith('redirect_uris') ? 'invalid_redirect_uri' : 'invalid_client_metadata';
          return oauthError(400, code, `${field ? `${field}: ` : ''}${issue.message}`);
        }
        const m = parsed.output;
        const method = m.token_endpoint_auth_method ?? 'client_secret_basic';
        const clientId = d.ids.uuid4();
        const secret = method === 'none' ? null : store.randomToken();
        const grantTypes = m.grant_types ?? ['authorization_code', 'refresh_token'];
        const now = d.clock.now();
        await store.insertClient(d.db, {
          client_id: clientId,
          secret,
          client_name: m.client_name ?? null,
          redirect_uris: m.redirect_uris,
          token_endpoint_auth_method: method,
          grant_types: grantTypes,
          scope: m.scope ?? null,
          now,
        });
        return Response.json(
          {
            client_id: clientId,
            ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
            client_id_issued_at: Math.floor(now.getTime() / 1000),
            redirect_uris: m.redirect_uris,
            token_endpoint_auth_method: method,
            grant_types: grantTypes,
            response_types: ['code'],
            ...(m.client_name ? { client_name: m.client_name } : {}),
            ...(m.scope ? { scope: m.scope } : {}),
          },
          { status: 201, headers: NO_STORE },
        );
      },
    },
    {
      method: 'GET',
      path: '/authorize',
      async handle(request) {
        const query = new URL(request.url).searchParams;
        const unsafe = unsafeParams(query);
        if (unsafe) return page(errorPage(`Invalid authorization request: ${unsafe}.`), 400);
        const req = await authorizationRequest(query, s.issuerFor(request));
        if (req.kind === 'fatal') return page(errorPage(req.message), 400);
        if (req.kind === 'redirect') return Response.redirect(req.url, 302);
        return page(signInPage({ clientName: req.client.client_name ?? req.client.client_id, redirectHost: new URL(req.redirect).host, params: req.carried }));
      },
    },
    {
      method: 'POST',
      path: '/authorize',
      async handle(request, ctx) {
        const form = await readForm(request);
        if (!form) return page(errorPage('Send the sign-in form (application/x-www-form-urlencoded, at most 16 KB).'), 400);
        const unsafe = unsafeParams(form);
        if (unsafe) return page(errorPage(`Invalid sign-in form: ${unsafe}.`), 400);
        const issuer = s.issuerFor(request);
        const req = await authorizationRequest(form, issuer);
        if (req.kind === 'fatal') return page(errorPage(req.message), 400);
        if (req.kind === 'redirect') return Response.redirect(req.url, 302);
        const back = (error: string, description: string) => {
          const url = new URL(req.redirect);
          url.searchParams.set('error', error);
          url.searchParams.set('error_description', description);
          if (req.state !== null) url.searchParams.set('state', req.state);
          url.searchParams.set('iss', issuer);
          return Response.redirect(url.toString(), 302);
        };
        if (form.get('decision') === 'deny') return back('access_denied', 'The user denied the request');
        const login = (form.get('login') ?? '').trim();
        const again = (error: string, status: number) =>
          page(
            signInPage({
              clientName: req.client.client_name ?? req.client.client_id,
              redirectHost: new URL(req.redirect).host,
              params: req.carried,
              login,
              error,
            }),
            status,
          );
        // Password guessing is bounded per address and per (account, address), in the database so every
        // instance counts together. Never per account alone: wrong passwords sent from anywhere would
        // lock the account's owner out (a denial of service anyone can run).
        const retry =
          (await limited(`oauth.signin.ip:${ctx.ip}`, 30, 300)) ?? (await limited(`oauth.signin.login-ip:${login.toLowerCase()}\n${ctx.ip}`, 10, 300));
        if (retry) return again(`Too many sign-in attempts; try again in ${retry} seconds.`, 429);
        const userId = await store.checkPassword(d.db, login, form.get('password') ?? '');
        if (!userId) return again('Unknown user name or wrong password.', 401);
        const code = store.randomToken();
        await store.insertCode(d.db, {
          code,
          clientId: req.client.client_id,
          userId,
          redirectUri: req.redirect,
          challenge: req.challenge,
          scope: req.scope,
          resources: req.resources.length ? req.resources : null,
          expiresAt: new Date(d.clock.now().getTime() + s.codeSeconds * 1000),
        });
        const url = new URL(req.redirect);
        url.searchParams.set('code', code);
        if (req.state !== null) url.searchParams.set('state', req.state);
        url.searchParams.set('iss', issuer);
        return Response.redirect(url.toString(), 302);
      },
    },
    {
      method: 'POST',
      path: '/token',
      async handle(request) {
        const form = await readForm(request);
        if (!form) return oauthError(400, 'invalid_request', 'Send application/x-www-form-urlencoded (at most 16 KB)');
        const unsafe = unsafeParams(form);
        if (unsafe) return oauthError(400, 'invalid_request', unsafe);
        const client = await authenticateClient(request, form);
        if (client instanceof Response) return client;
        const requested = requestedResources(form.getAll('resource'));
        if (!requested) return oauthError(400, 'invalid_target', invalidTarget);
        /** RFC 8707 section 2.2: a token request may narrow the grant's resources, never widen them. */
        const audienceOf = (granted: string[]) => (requested.length ? (requested.every((r) => granted.includes(r)) ? requested : null) : granted);
        const issuer = s.issuerFor(request);
        const grantType = form.get('grant_type');
        if (!grantType || !client.grant_types.includes(grantType))
          return oauthError(400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token (as registered)');
        const now = d.clock.now();

        if (grantType === 'authorization_code') {
          const code = form.get('code') ?? '';
          const result = await d.db.transaction(async (tx) => {
            const [row] = await tx.query<{
              client_id: string;
              user_id: string;
              redirect_uri: string;
              code_challenge: string;
              scope: string | null;
              expires_at: Date;
              used_at: Date | null;
              grant_id: string | null;
              resources: string[] | null;
            }>(sql`
              SELECT client_id, user_id::text, redirect_uri, code_challenge, scope, expires_at, used_at, grant_id::text, resources FROM oauth_codes
              WHERE code_hash = ${store.digest(code)}::bytea FOR UPDATE`);
            if (!row || row.client_id !== client.client_id) return { error: 'unknown or foreign authorization code' };
            if (row.used_at) {
              // A replayed code: whatever was issued for it is revoked (RFC 6749 section 4.1.2).
              if (row.grant_id) await store.revokeGrant(tx, row.grant_id, 'code_replay', now);
              return { error: 'authorization code already used', revoked: row.grant_id };
            }
            if (new Date(row.expires_at).getTime() <= now.getTime()) return { error: 'authorization code expired' };
            if ((form.get('redirect_uri') ?? row.redirect_uri) !== row.redirect_uri) return { error: 'redirect_uri does not match the authorization request' };
            if (!pkceMatches(form.get('code_verifier') ?? '', row.code_challenge)) return { error: 'code_verifier does not match the code_challenge' };
            // The audience: what the authorization request named (the token request may narrow it), else
            // what the token request names, else the registry's resources.
            const audience = row.resources?.length ? audienceOf(row.resources) : requested.length ? requested : s.defaultResources(request);
            if (!audience) return { target: true as const };
            const grantId = d.ids.uuid7();
            await store.createGrant(tx, {
              id: grantId,
              clientId: client.client_id,
              userId: row.user_id,
              scope: row.scope,
              resources: row.resources?.length ? row.resources : audience,
              now,
            });
            await tx.query(
              sql`UPDATE oauth_codes SET used_at = ${now}::timestamptz, grant_id = ${grantId}::uuid WHERE code_hash = ${store.digest(code)}::bytea`,
            );
            return { grantId, userId: row.user_id, scope: row.scope, audience };
          });
          if ('target' in result) return oauthError(400, 'invalid_target', 'resource must be one the authorization request named');
          if ('error' in result) {
            if (result.revoked) d.revoked(result.revoked);
            return oauthError(400, 'invalid_grant', result.error!);
          }
          return mintTokens(issuer, client.client_id, result.userId, result.grantId, result.scope, result.audience);
        }

        const token = form.get('refresh_token') ?? '';
        const result = await d.db.transaction(async (tx) => {
          const [row] = await tx.query<{
            grant_id: string;
            expires_at: Date;
            used_at: Date | null;
            client_id: string;
            user_id: string;
            scope: string | null;
            revoked: boolean;
            resources: string[] | null;
          }>(sql`
            SELECT r.grant_id::text, r.expires_at, r.used_at, g.client_id, g.user_id::text, g.scope, g.revoked_at IS NOT NULL AS revoked, g.resources
            FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id
            WHERE r.token_hash = ${store.digest(token)}::bytea FOR UPDATE OF r, g`);
          if (!row || row.client_id !== client.client_id) return { error: 'unknown refresh token' };
          if (row.revoked) return { error: 'the grant was revoked' };
          if (row.used_at) {
            // Reuse of a rotated token: someone else holds a copy. End the whole grant.
            await store.revokeGrant(tx, row.grant_id, 'refresh_token_reuse', now);
            d.logger.warn({ grant: row.grant_id, client: row.client_id }, 'refresh token reuse: grant revoked');
            return { error: 'refresh token already used; the grant is revoked', revoked: row.grant_id };
          }
          if (new Date(row.expires_at).getTime() <= now.getTime()) return { error: 'refresh token expired' };
          const audience = audienceOf(row.resources?.length ? row.resources : s.defaultResources(request));
          if (!audience) return { target: true as const };
          await tx.query(sql`UPDATE oauth_refresh_tokens SET used_at = ${now}::timestamptz WHERE token_hash = ${store.digest(token)}::bytea`);
          return { grantId: row.grant_id, userId: row.user_id, scope: row.scope, audience };
        });
        if ('target' in result) return oauthError(400, 'invalid_target', "resource must be one of the grant's resources");
        if ('error' in result) {
          if ('revoked' in result && result.revoked) d.revoked(result.revoked);
          return oauthError(400, 'invalid_grant', result.error!);
        }
        return mintTokens(issuer, client.client_id, result.userId, result.grantId, result.scope, result.audience);
      },
    },
    {
      method: 'POST',
      path: '/revoke',
      async handle(request) {
        const form = await readForm(request);
        if (!form) return oauthError(400, 'invalid_request', 'Send application/x-www-form-urlencoded (at most 16 KB)');
        const unsafe = unsafeParams(form);
        if (unsafe) return oauthError(400, 'invalid_request', unsafe);
        const client = await authenticateClient(request, form);
        if (client instanceof Response) return client;
        const token = form.get('token') ?? '';
        const now = d.clock.now();
        // RFC 7009: answer 200 whatever the token was; only the client's own tokens are revoked.
        const [refresh] = await d.db.query<{ grant_id: string; client_id: string }>(sql`
          SELECT r.grant_id::text, g.client_id FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id
          WHERE r.token_hash = ${store.digest(token)}::bytea`);
        if (refresh?.client_id === client.client_id) {
          await store.revokeGrant(d.db, refresh.grant_id, 'revoked', now);
          d.revoked(refresh.grant_id);
        } else if (!refresh) {
          // An access token of this client: its grant (and so every token minted from it) ends.
          const claims = await d.accessClaims(token);
          if (claims?.client_id === client.client_id && typeof claims.sid === 'string') {
            await store.revokeGrant(d.db, claims.sid, 'revoked', now);
            d.revoked(claims.sid);
          }
        }
        return new Response(null, { status: 200, headers: NO_STORE });
      },
    },
  ];
}
