import type { EndpointDefinition } from '../../core/endpoint.ts';
import { authenticateRequest, tierAtLeast, type AuthPort, type Principal } from '../../core/ports/auth.ts';
import type { RateLimiterPort } from '../../core/ports/rate-limit.ts';
import { ProtocolError } from '../../core/errors.ts';
import { parseOrThrow } from '../../core/validation.ts';
import type { Logger } from '../../core/log.ts';

export interface EndpointCollaborators {
  auth: AuthPort | undefined;
  limiter: RateLimiterPort | undefined;
  logger: Logger;
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

/**
 * The one way an endpoint definition is executed, whatever the transport (REST route, MCP tool):
 * authentication and standing, validation of query, params and body, rate limits, handler. Failures
 * throw ProtocolError; the host maps them to its wire shape.
 */
export async function callEndpoint(e: EndpointDefinition, call: EndpointCall, c: EndpointCollaborators): Promise<unknown> {
  let principal: Principal | null = null;
  if (e.auth && e.auth !== 'none') {
    if (call.admitted) {
      principal = call.admitted.principal;
      if (!principal && e.auth === 'required') throw new ProtocolError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <token>');
      if (principal && e.tier && !tierAtLeast(principal.tier, e.tier))
        throw new ProtocolError('PERMISSION_DENIED', `This operation requires ${e.tier} standing`);
    } else principal = await authenticateRequest(c.auth, call.authorization, e.auth, e.tier);
  }
  const query = e.query ? parseOrThrow(e.query, call.query, 'query') : undefined;
  const params = e.params ? parseOrThrow(e.params, call.params, 'params') : call.params;
  const hasBody = e.method !== 'GET' && e.method !== 'DELETE';
  const body = hasBody && e.body ? parseOrThrow(e.body, await call.body(), 'body') : undefined;

  for (const rule of e.rateLimits ?? []) {
    if (!c.limiter) break;
    const subject =
      rule.per === 'ip'
        ? call.ip()
        : rule.per === 'organization'
          ? principal
            ? `org:${principal.orgId}`
            : `ip:${call.ip()}`
          : (principal?.id ?? `ip:${call.ip()}`);
    const decision = await c.limiter.consume(`${rule.name}:${subject}`, rule.limit, rule.windowSeconds);
    if (!decision.allowed) {
      throw new ProtocolError(
        'RATE_LIMITED',
        `Rate limit exceeded: ${rule.limit} per ${describeWindow(rule.windowSeconds)}${rule.per === 'organization' ? ' per organization' : ''}`,
        {
          retryAfter: decision.retryAfter,
        },
      );
    }
  }

  return e.handler({
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
  });
}

function describeWindow(seconds: number): string {
  if (seconds === 3600) return 'hour';
  if (seconds === 86_400) return 'day';
  if (seconds === 60) return 'minute';
  return `${seconds} s`;
}
