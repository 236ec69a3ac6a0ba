import type { ProtocolError } from './errors.ts';
import { token } from './token.ts';

/**
 * A raw HTTP handler mounted by a host plugin. Hosts translate between the wire and features;
 * `hosts/serve.ts` owns the one server and routes to these.
 */
export interface HttpRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'ALL';
  /** Path with `{param}` segments, e.g. `/api/brands/{domain}/rollback`; a final `*` matches the rest of the path. */
  path: string;
  handle(request: Request, ctx: HttpContext): Promise<Response> | Response;
}

export interface HttpContext {
  params: Record<string, string>;
  requestId: string;
  /** Client address as seen by the server (for per-IP limits). */
  ip: string;
}

/** The routes every host contributes; read by hosts/serve.ts. */
export class HttpRoutes {
  private readonly routes: HttpRoute[] = [];
  add(...routes: HttpRoute[]): void {
    this.routes.push(...routes);
  }
  list(): readonly HttpRoute[] {
    return this.routes;
  }
}

export const Http = token<HttpRoutes>('core.http-routes');

/** A raw route's answer to a refused request: the task error list (`{errors: [{code, message, field?}]}`), never cached. */
export function protocolErrorResponse(error: ProtocolError): Response {
  const entry = { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) };
  return Response.json({ errors: [entry] }, { status: error.status, headers: { 'cache-control': 'no-store' } });
}
