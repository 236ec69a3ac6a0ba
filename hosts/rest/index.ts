import * as v from 'valibot';
import { definePlugin } from '../../core/plugin.ts';
import { Endpoints, JsonText, Reply, type EndpointDefinition } from '../../core/endpoint.ts';
import { Http, type HttpRoute } from '../../core/http.ts';
import { Database } from '../../core/ports/database.ts';
import { Auth, bearerToken, tierAtLeast, type Principal } from '../../core/ports/auth.ts';
import { RateLimiter } from '../../core/ports/rate-limit.ts';
import { ProtocolError } from '../../core/errors.ts';
import { parseOrThrow } from '../../core/validation.ts';
import type { Logger } from '../../core/log.ts';
import { errorResponse } from './errors.ts';
import { queryObject, readJsonBody } from './request.ts';
import { buildOpenApi, openApiYaml } from './openapi.ts';

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(status === 204 ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

interface Collaborators {
  auth: { authenticate(bearer: string): Promise<Principal | null> } | undefined;
  limiter: { consume(key: string, limit: number, windowSeconds: number): Promise<{ allowed: boolean; retryAfter: number }> } | undefined;
  maxBody: number;
  logger: Logger;
}

/** Turn one endpoint definition into an HTTP route: auth, validation, rate limits, handler, error mapping. */
export function endpointRoute(e: EndpointDefinition, c: Collaborators): HttpRoute {
  const hasBody = e.method !== 'GET' && e.method !== 'DELETE';
  return {
    method: e.method,
    path: e.path,
    async handle(request, ctx) {
      try {
        const credential = bearerToken(request.headers.get('authorization'));
        let principal: Principal | null = null;
        if (request.headers.has('authorization') && !credential && e.auth !== 'none') {
          throw new ProtocolError('UNAUTHORIZED', 'Authorization header must be "Bearer <token>"');
        }
        if (credential && e.auth && e.auth !== 'none') {
          if (!c.auth) throw new ProtocolError('UNAUTHORIZED', 'This deployment has no authentication configured');
          principal = await c.auth.authenticate(credential);
          if (!principal) throw new ProtocolError('UNAUTHORIZED', 'Invalid or revoked credential');
        }
        if (e.auth === 'required' && !principal) throw new ProtocolError('UNAUTHORIZED', 'Authentication required: send Authorization: Bearer <api key>');
        if (e.tier && principal && !tierAtLeast(principal.tier, e.tier)) {
          throw new ProtocolError('FORBIDDEN', `This operation requires ${e.tier} standing`);
        }

        const query = e.query ? parseOrThrow(e.query, queryObject(request.url), 'query') : undefined;
        const params = e.params ? parseOrThrow(e.params, ctx.params, 'params') : ctx.params;
        let body: unknown;
        if (hasBody && e.body) body = parseOrThrow(e.body, await readJsonBody(request, c.maxBody), 'body');

        for (const rule of e.rateLimits ?? []) {
          if (!c.limiter) break;
          const subject = rule.per === 'principal' ? (principal?.id ?? `ip:${ctx.ip}`) : ctx.ip;
          const decision = await c.limiter.consume(`${rule.name}:${subject}`, rule.limit, rule.windowSeconds);
          if (!decision.allowed) {
            throw new ProtocolError('RATE_LIMITED', `Rate limit exceeded: ${rule.limit} per ${rule.windowSeconds} s`, { retryAfter: decision.retryAfter });
          }
        }

        const result = await e.handler({
          query,
          params,
          body,
          principal,
          requestId: ctx.requestId,
          get ip() {
            return ctx.ip; // resolved on first use only
          },
          headers: request.headers,
          logger: c.logger,
        });
        if (result instanceof Response) return result;
        if (result instanceof Reply) return json(result.status, result.body, result.headers);
        if (result instanceof JsonText) return new Response(result.text, { status: e.success?.status ?? 200, headers: { 'content-type': 'application/json' } });
        return json(e.success?.status ?? 200, result);
      } catch (error) {
        if (error instanceof ProtocolError) return errorResponse(error);
        throw error;
      }
    },
  };
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
  requires: [Database],
  optional: [Auth, RateLimiter],
  options,
  start(ctx) {
    const endpoints = ctx.get(Endpoints).list();
    const http = ctx.get(Http);
    const database = ctx.get(Database);
    const collaborators: Collaborators = {
      auth: ctx.tryGet(Auth),
      limiter: ctx.tryGet(RateLimiter),
      maxBody: ctx.config.server.maxBodyBytes,
      logger: ctx.logger,
    };
    http.add(...endpoints.map((e) => endpointRoute(e, collaborators)));

    let yaml: string | null = null;
    const openapi: HttpRoute['handle'] = () => {
      yaml ??= openApiYaml(buildOpenApi(ctx.get(Endpoints).list(), { title: ctx.options.title, version: ctx.options.version, serverUrl: ctx.config.server.publicUrl }));
      return new Response(yaml, { headers: { 'content-type': 'application/yaml; charset=utf-8' } });
    };
    http.add(
      { method: 'GET', path: '/health', handle: () => json(200, { status: 'ok' }) },
      {
        method: 'GET',
        path: '/ready',
        async handle() {
          try {
            await database.ping();
            return json(200, { status: 'ready', database: database.kind });
          } catch {
            return json(503, { status: 'unavailable', error: 'database_unreachable', message: 'The database does not answer' });
          }
        },
      },
      { method: 'GET', path: '/openapi/registry.yaml', handle: openapi },
      { method: 'GET', path: '/.well-known/openapi.yaml', handle: openapi },
    );
  },
});

export default restHost;
