import type { EndpointDefinition } from '../../core/endpoint.ts';
import { authenticateRequest, tierAtLeast, type AuthPort, type Principal } from '../../core/ports/auth.ts';
import type { RateLimiterPort } from '../../core/ports/rate-limit.ts';
import { enforceRateLimits, operationPipeline } from '../../core/operation.ts';
import { ProtocolError } from '../../core/errors.ts';
import { parseOrThrow } from '../../core/validation.ts';
import type { Logger } from '../../core/log.ts';

export interface EndpointCollaborators {
  auth: AuthPort | undefined;
  limiter: RateLimiterPort | undefined;
  logger: Logger;
  /** The protected resource these endpoints are served as (`/api`, `/mcp`): OAuth tokens must be minted for it. */
  resource?: string;
}

/** One call of an endpoint as a host received it: raw, unvalidated values. */
export interface EndpointCall {
  query: Record<string, unknown>;
  params: Record<string, string>;
  /** Read lazily (REST reads the body only after auth and the query passed). */
  body: () => Promise<unknown>;
  authorization: string | null;
  ip: () => string;
  requestId: string;
  headers: Headers;
  /** The caller was already authenticated by the host (null: no credential sent); standing is still checked. */
  admitted?: { principal: Principal | null };
}

interface EndpointState {
  e: EndpointDefinition;
  call: EndpointCall;
  c: EndpointCollaborators;
  principal: Principal | null;
  query?: unknown;
  params?: unknown;
  body?: unknown;
}

const run = operationPipeline<EndpointState, unknown>([
  {
    name: 'auth',
    async run(s, next) {
      const { e, call, c } = s;
      if (!e.auth || e.auth === 'none') return next(s);
      if (!call.admitted) s.principal = await authenticateRequest(c.auth, call.authorization, e.auth, e.tier, c.resource);
      else {
        s.principal = call.admitted.principal;
        if (!s.principal && e.auth === 'required') throw new ProtocolError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <token>');
        if (s.principal && e.tier && !tierAtLeast(s.principal.tier, e.tier))
          throw new ProtocolError('PERMISSION_DENIED', `This operation requires ${e.tier} standing`);
      }
      return next(s);
    },
  },
  {
    name: 'validate',
    async run(s, next) {
      const { e, call } = s;
      s.query = e.query ? parseOrThrow(e.query, call.query, 'query') : undefined;
      s.params = e.params ? parseOrThrow(e.params, call.params, 'params') : call.params;
      const hasBody = e.method !== 'GET' && e.method !== 'DELETE';
      s.body = hasBody && e.body ? parseOrThrow(e.body, await call.body(), 'body') : undefined;
      return next(s);
    },
  },
  {
    name: 'limits',
    async run(s, next) {
      // Assembly refuses an endpoint with rate limits and no limiter (assertStageProviders).
      if (s.e.rateLimits?.length) await enforceRateLimits(s.e.rateLimits, s.c.limiter!, s.principal, s.call.ip);
      return next(s);
    },
  },
  {
    name: 'handler',
    run: ({ e, call, c, principal, query, params, body }) =>
      Promise.resolve(
        e.handler({
          query,
          params,
          body,
          principal,
          requestId: call.requestId,
          get ip() {
            return call.ip(); // resolved on first use only
          },
          headers: call.headers,
          logger: c.logger,
        }),
      ),
  },
]);

/**
 * The one way an endpoint definition is executed, whatever the transport (REST route, MCP tool): the
 * operation pipeline's stages for endpoints (authentication and standing, validation of query, params
 * and body, rate limits, handler). Failures throw ProtocolError; the host maps them to its wire shape.
 */
export function callEndpoint(e: EndpointDefinition, call: EndpointCall, c: EndpointCollaborators): Promise<unknown> {
  return run({ e, call, c, principal: null });
}
