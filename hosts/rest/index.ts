import * as v from 'valibot';
import { definePlugin, optional } from '../../core/plugin.ts';
import { Endpoints, JsonText, Reply, type EndpointDefinition } from '../../core/endpoint.ts';
import { Http, type HttpRoute } from '../../core/http.ts';
import { Database } from '../../core/ports/database.ts';
import { Auth } from '../../core/ports/auth.ts';
import { RateLimiter } from '../../core/ports/rate-limit.ts';
import { TokenVerifier, type TokenVerifierPort } from '../../core/ports/token-verifier.ts';
import { ProtocolError } from '../../core/errors.ts';
import { callEndpoint, type EndpointCollaborators } from '../shared/endpoint-call.ts';
import { trustedBaseUrl } from '../../lib/urls.ts';
import { errorResponse } from './errors.ts';
import { queryObject, readJsonBody } from './request.ts';
import { buildOpenApi, openApiYaml } from './openapi.ts';

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(status === 204 ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

interface Collaborators extends EndpointCollaborators {
  maxBody: number;
  /** Present when OAuth is deployed: 401s name the REST API's protected-resource metadata. */
  verifier: TokenVerifierPort | undefined;
  server: { publicUrl?: string; host: string };
}

/** Turn one endpoint definition into an HTTP route: auth, validation, rate limits, handler, error mapping. */
export function endpointRoute(e: EndpointDefinition, c: Collaborators): HttpRoute {
  return {
    method: e.method,
    path: e.path,
    async handle(request, ctx) {
      try {
        const result = await callEndpoint(
          e,
          {
            query: queryObject(request.url),
            params: ctx.params,
            body: () => readJsonBody(request, c.maxBody),
            authorization: request.headers.get('authorization'),
            ip: () => ctx.ip,
            requestId: ctx.requestId,
            headers: request.headers,
          },
          c,
        );
        if (result instanceof Response) return result;
        if (result instanceof Reply) return json(result.status, result.body, result.headers);
        const text = result instanceof JsonText ? result.text : JSON.stringify(result);
        return e.etag
          ? conditional(request, text, e.auth === 'optional')
          : new Response(text, { status: e.success?.status ?? 200, headers: { 'content-type': 'application/json' } });
      } catch (error) {
        if (!(error instanceof ProtocolError)) throw error;
        const response = errorResponse(error);
        if (response.status === 401 && c.verifier) {
          const metadata = c.verifier.resourceMetadataUrl(trustedBaseUrl(c.server, request) ?? '', '/api');
          const sent = request.headers.has('authorization');
          response.headers.set('www-authenticate', `Bearer resource_metadata="${metadata}"${sent ? ', error="invalid_token"' : ''}`);
        }
        return response;
      }
    },
  };
}

/** /ready answers within this, whatever the database does. */
const READY_TIMEOUT_MS = 1000;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A 200 with a strong ETag (digest of the exact bytes), or 304 when `If-None-Match` names it.
 * Clients revalidate every time (`no-cache`); answers that depend on the caller vary on Authorization.
 */
function conditional(request: Request, text: string, perCaller: boolean): Response {
  const tag = `"${Bun.hash(text).toString(36)}-${text.length.toString(36)}"`;
  const headers: Record<string, string> = { etag: tag, 'cache-control': 'no-cache' };
  if (perCaller) headers.vary = 'Authorization';
  const match = request.headers.get('if-none-match');
  if (match && (match.trim() === '*' || match.split(',').some((t) => t.trim().replace(/^W\//, '') === tag)))
    return new Response(null, { status: 304, headers });
  return new Response(text, { headers: { 'content-type': 'application/json', ...headers } });
}

const options = v.object({
  /** OpenAPI document title. */
  title: v.optional(v.string(), 'Registry API'),
  version: v.optional(v.string(), '1.0.0'),
});

/**
 * REST host: serves every endpoint definition contributed by feature plugins, plus
 * `/health`, `/ready` and the OpenAPI description generated from the same definitions.
 */
export const restHost = definePlugin({
  name: 'host-rest',
  deps: { db: Database, endpoints: Endpoints, http: Http, auth: optional(Auth), limiter: optional(RateLimiter), verifier: optional(TokenVerifier) },
  options,
  init({ db, endpoints, http, auth, limiter, verifier }, kernel) {
    const collaborators: Collaborators = {
      auth,
      limiter,
      verifier,
      // The REST API is the protected resource `/api`: OAuth tokens must be minted for the registry.
      resource: '/api',
      server: kernel.config.server,
      maxBody: kernel.config.server.maxBodyBytes,
      logger: kernel.logger,
    };
    // One document per base URL (the configured public URL, else a loopback or configured Host;
    // an untrusted Host gets a relative server URL, never its own echo).
    const documents = new Map<string, { yaml: string; json: string }>();
    const documentFor = (request: Request) => {
      const base = trustedBaseUrl(kernel.config.server, request) ?? '/';
      let doc = documents.get(base);
      if (!doc) {
        const built = buildOpenApi(endpoints.list(), {
          title: kernel.options.title,
          version: kernel.options.version,
          serverUrl: base,
          oauth: verifier?.securityScheme(base),
        });
        doc = { yaml: openApiYaml(built), json: JSON.stringify(built) };
        if (documents.size < 8) documents.set(base, doc);
      }
      return doc;
    };
    const openapi: HttpRoute['handle'] = (request) =>
      new Response(documentFor(request).yaml, { headers: { 'content-type': 'application/yaml; charset=utf-8' } });
    return {
      // Endpoints are read at start: every feature plugin has contributed its own by then.
      start() {
        http.add(...endpoints.list().map((e) => endpointRoute(e, collaborators)));
        http.add(
          { method: 'GET', path: '/health', handle: () => json(200, { status: 'ok' }) },
          {
            method: 'GET',
            path: '/ready',
            async handle() {
              try {
                await within(db.ping(), READY_TIMEOUT_MS);
                return json(200, { status: 'ready', database: db.kind });
              } catch {
                return json(503, { status: 'unavailable', error: 'database_unreachable', message: 'The database does not answer' }, { 'retry-after': '5' });
              }
            },
          },
          { method: 'GET', path: '/openapi/registry.yaml', handle: openapi },
          { method: 'GET', path: '/.well-known/openapi.yaml', handle: openapi },
          // The same document as JSON (the web page's API reference reads it).
          {
            method: 'GET',
            path: '/openapi/registry.json',
            handle: (request) => new Response(documentFor(request).json, { headers: { 'content-type': 'application/json' } }),
          },
        );
      },
    };
  },
});

export default restHost;
