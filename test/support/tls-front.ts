import { TEST_CERT, TEST_KEY } from './loopback.ts';

/** Forward a request to `base` (same path and query), as a reverse proxy does. */
export async function forward(base: string, req: Request, body?: ArrayBuffer): Promise<Response> {
  const url = new URL(req.url);
  const headers = new Headers(req.headers);
  headers.delete('host');
  const payload = body ?? (req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer());
  const upstream = await fetch(base.replace(/\/$/, '') + url.pathname + url.search, { method: req.method, headers, body: payload, redirect: 'manual' });
  // Re-wrap so the front's own framing applies (no stale content-encoding/length from fetch).
  const out = new Headers(upstream.headers);
  out.delete('content-encoding');
  out.delete('content-length');
  return new Response(upstream.body, { status: upstream.status, headers: out });
}

/**
 * A TLS front on loopback for servers that listen on plain http (test deployments): requests for a
 * host name the test certificate covers (`*.pub.test`) are forwarded to the base URL routed for
 * that name, so the crawler reaches real agents over https with a verified name. Names may also be
 * routed to a handler (a hand-written stub agent). Unrouted names answer 404.
 */
export function startTlsFront() {
  const routes = new Map<string, string | ((req: Request) => Response | Promise<Response>)>();
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: TEST_CERT, key: TEST_KEY },
    async fetch(req) {
      const url = new URL(req.url);
      const route = routes.get(url.hostname);
      if (!route) return new Response('no such host', { status: 404, headers: { 'content-type': 'text/plain' } });
      return typeof route === 'function' ? route(req) : forward(route, req);
    },
  });
  return {
    port: server.port!,
    /** `https://{name}:{port}` + path. */
    url: (name: string, path = '') => `https://${name}:${server.port}${path}`,
    route(name: string, target: string | ((req: Request) => Response | Promise<Response>)) {
      routes.set(name, typeof target === 'string' ? target.replace(/\/$/, '') : target);
    },
    stop: () => server.stop(true),
  };
}
