import type { Server } from 'bun';
import type { Deployment } from '../core/deployment.ts';
import { Http, type HttpRoute } from '../core/http.ts';
import { Ids } from '../core/ports/ids.ts';
import { DatabaseUnavailableError } from '../core/ports/database.ts';
import { ProtocolError } from '../core/errors.ts';
import { accessLogger } from './access-log.ts';
import { collectGarbage, idleCollector, shrink, type IdleStage } from './idle-collect.ts';

/** `/api/brands/{domain}/rollback` -> `/api/brands/:domain/rollback` (Bun's route syntax). */
function bunPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** How long a shutdown waits for in-flight requests before closing connections. */
const DRAIN_MS = 10_000;

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** Whether a route path (`/a/{x}/b`, or `/a/*` for everything below `/a`) matches a request path. */
function pathMatches(route: string, path: string): boolean {
  const want = route.split('/');
  const have = path.split('/');
  const rest = want.at(-1) === '*';
  if (rest ? have.length < want.length : want.length !== have.length) return false;
  return want.every((seg, i) => (rest && i === want.length - 1) || (seg.startsWith('{') && seg.endsWith('}') ? have[i] !== '' : seg === have[i]));
}

/**
 * The answer for a request no route took: 405 with `Allow` when the path exists under other
 * methods, 501 for a method no route implements, else 404. (Methods outside Bun's list never
 * reach the app: Bun closes those connections itself.)
 */
function unrouted(routes: readonly HttpRoute[], method: string, path: string): Response {
  const methods = new Set(routes.map((r) => r.method));
  if (!methods.has(method as HttpRoute['method']) && !methods.has('ALL') && method !== 'HEAD') {
    return json(501, { error: 'not_implemented', message: `Method ${method} is not implemented` });
  }
  const allow = [...new Set(routes.filter((r) => pathMatches(r.path, path)).map((r) => r.method))];
  if (allow.length) return json(405, { error: 'method_not_allowed', message: `${method} is not allowed on ${path}` }, { allow: allow.join(', ') });
  return json(404, { error: 'not_found', message: `No route for ${method} ${path}` });
}

/** A failure the client caused or a dependency's outage, answered without logging a server error. */
function expectedFailure(error: unknown): Response | null {
  if (error instanceof DatabaseUnavailableError) {
    return json(503, { error: 'service_unavailable', message: 'The database is unavailable; retry later' }, { 'retry-after': String(error.retryAfter) });
  }
  if (error instanceof ProtocolError && error.status < 500) return json(error.status, { error: error.code.toLowerCase(), message: error.message });
  return null;
}

/**
 * What a route handler gets besides the request. The peer address is looked up only when a route
 * reads it (per-IP limits); a class, so a request allocates no getter of its own.
 */
class RouteContext {
  private address: string | undefined;

  constructor(
    readonly params: Record<string, string>,
    readonly requestId: string,
    private readonly server: Pick<Server<undefined>, 'requestIP'> | undefined,
    private readonly request: Request,
  ) {}

  get ip(): string {
    this.address ??= this.server?.requestIP?.(this.request)?.address ?? 'unknown';
    return this.address;
  }
}

export interface RunningServer {
  readonly url: URL;
  readonly port: number;
  /** Stop accepting connections, wait for in-flight requests, then stop the deployment. */
  close(): Promise<void>;
}

export type Handler = (request: Request, server: Server<undefined>) => Promise<Response>;

/** What Bun.serve takes: the routes, by path and method, and the handler of every request no route took. */
export interface App {
  routes: Record<string, Handler | Partial<Record<HttpRoute['method'], Handler>>>;
  fetch(request: Request): Response;
}

/**
 * Bun's own router serves every route the hosts contributed (`{name}` parameters, `/*` below a path,
 * HEAD by GET); a path or method no route takes falls through to `fetch`. Each request gets a request
 * id (echoed as `x-request-id`) and exactly one log line; an unexpected error is a 500 whose body names
 * the request id, never the error.
 */
export function buildApp(deployment: Deployment, onRequest: () => void = () => {}): App {
  const routes = deployment.get(Http).list();
  const ids = deployment.get(Ids);
  const log = deployment.logger.child({ component: 'http' });
  const access = accessLogger(deployment.logger);
  const maxBody = deployment.config.server.maxBodyBytes;
  // Request ids: a random per-process prefix and a counter, unique across instances and cheaper than a UUID.
  const prefix = ids.uuid4().slice(0, 8);
  let counter = 0;
  const nextRequestId = () => `${prefix}-${(++counter).toString(36).padStart(6, '0')}`;
  // Durations for the access log only (never a decision), so the monotonic timer rather than the Clock port.
  const elapsed = (since: number) => Math.round((performance.now() - since) * 10) / 10;

  const logged = (request: Request, requestId: string, response: Response, started: number) => {
    response.headers.set('x-request-id', requestId);
    if (access) {
      const url = request.url;
      const pathStart = url.indexOf('/', url.indexOf('//') + 2);
      const queryStart = url.indexOf('?', pathStart);
      access({
        requestId,
        method: request.method,
        path: url.slice(pathStart, queryStart === -1 ? undefined : queryStart),
        status: response.status,
        ms: elapsed(started),
      });
    }
    return response;
  };

  const wrap =
    (route: HttpRoute): Handler =>
    async (request, server) => {
      onRequest();
      const started = access ? performance.now() : 0;
      const incoming = request.headers.get('x-request-id');
      const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : nextRequestId();
      let response: Response;
      const declared = Number(request.headers.get('content-length') ?? 0);
      if (declared > maxBody) {
        response = json(413, { error: 'payload_too_large', message: `Request body exceeds ${maxBody} bytes` });
      } else {
        try {
          // Bun has percent-decoded the parameters already.
          const params = (request as Request & { params?: Record<string, string> }).params ?? {};
          response = await route.handle(request, new RouteContext(params, requestId, server, request));
        } catch (error) {
          const expected = expectedFailure(error);
          if (expected) {
            if (expected.status >= 500) log.warn({ err: (error as Error).message, requestId }, 'dependency unavailable');
            response = expected;
          } else {
            log.error({ err: error, requestId }, 'unhandled error');
            response = json(500, { error: 'internal_error', message: `Unexpected error (request ${requestId})` });
          }
        }
      }
      return logged(request, requestId, response, started);
    };

  const table: App['routes'] = {};
  for (const route of routes) {
    const path = bunPath(route.path);
    if (route.method === 'ALL') table[path] = wrap(route);
    else {
      const methods = table[path];
      if (typeof methods === 'function') throw new Error(`route ${route.path} is served for every method and also for ${route.method}`);
      table[path] = { ...methods, [route.method]: wrap(route) };
    }
  }
  return {
    routes: table,
    // Requests no route handled still get a request id and their access-log line.
    fetch(request) {
      const started = performance.now();
      const response = unrouted(routes, request.method, new URL(request.url).pathname);
      return logged(request, nextRequestId(), response, started);
    },
  };
}

export interface ListenOptions {
  port?: number;
  hostname?: string;
  reusePort?: boolean;
}

/**
 * Schedule the started deployment's idle collection and shrink (hosts/idle-collect.ts): the hook
 * each request calls, or none when both are off (`IDLE_COLLECT_MS=0`, `IDLE_SHRINK_MS=0`).
 */
export function scheduleIdleCollection(deployment: Deployment): (() => void) | undefined {
  const { idleCollectMs, idleShrinkMs } = deployment.config.server;
  const stages: IdleStage[] = [];
  if (idleCollectMs) stages.push({ name: 'host.idle-collect', idleMs: idleCollectMs, collect: collectGarbage });
  if (idleShrinkMs) stages.push({ name: 'host.idle-shrink', idleMs: idleShrinkMs, collect: shrink });
  if (stages.length === 0) return undefined;
  const collector = idleCollector(stages);
  for (const job of collector.jobs) deployment.scheduler.add(job);
  return collector.touch;
}

/** Bun.serve's settings for a deployment, beside its routes. */
export function listenSettings(deployment: Deployment, options: ListenOptions = {}) {
  return {
    port: options.port ?? deployment.config.server.port,
    hostname: options.hostname ?? deployment.config.server.host,
    maxRequestBodySize: deployment.config.server.maxBodyBytes,
    // Several processes share the port (hosts/workers.ts).
    reusePort: options.reusePort ?? false,
    // Seconds a connection may stay silent (Bun's default is 10; streamed answers get longer).
    idleTimeout: 30,
  };
}

/**
 * Start the deployment and serve it. `port: 0` picks a free port (tests). SIGTERM/SIGINT
 * handling is the caller's (see hosts/start.ts) so tests can run several servers in a process.
 */
export async function serve(deployment: Deployment, options: ListenOptions = {}): Promise<RunningServer> {
  await deployment.start();
  const app = buildApp(deployment, scheduleIdleCollection(deployment));
  const server = Bun.serve({ routes: app.routes, fetch: app.fetch, ...listenSettings(deployment, options) });
  let closing: Promise<void> | null = null;
  return {
    url: new URL(`http://${server.hostname === '0.0.0.0' ? '127.0.0.1' : server.hostname}:${server.port}`),
    port: server.port!,
    close() {
      closing ??= (async () => {
        // Let in-flight requests finish, but do not wait forever on a client holding a stream open.
        const drained = server.stop(false);
        const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), DRAIN_MS).unref());
        if ((await Promise.race([drained, timeout])) === 'timeout') {
          deployment.logger.warn({ drainMs: DRAIN_MS }, 'connections still open after the drain period; closing them');
          await server.stop(true);
        }
        await deployment.stop();
      })();
      return closing;
    },
  };
}
