import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Resolver } from '../../plugins/crawler-http/index.ts';

/** Self-signed certificate for pub.test, *.pub.test, other.test, *.other.test (test/fixtures/tls). */
export const TEST_CERT = readFileSync(join(import.meta.dir, '../fixtures/tls/cert.pem'), 'utf8');
export const TEST_KEY = readFileSync(join(import.meta.dir, '../fixtures/tls/key.pem'), 'utf8');

/** A loopback port nothing listens on now (the kernel's pick: a random one can be some connection's ephemeral port). */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

/**
 * A resolver answering from a table (tests): names map to address lists; unknown names fail like
 * NXDOMAIN. `calls` counts lookups per name so tests can see that a request resolved once.
 */
export function tableResolver(
  table: Record<string, string[] | (() => string[])>,
  txt: Record<string, string[][]> = {},
): Resolver & { calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  return {
    calls,
    async lookup(host) {
      calls[host] = (calls[host] ?? 0) + 1;
      const entry = table[host];
      if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return typeof entry === 'function' ? entry() : entry;
    },
    async resolveTxt(name) {
      const records = txt[name];
      if (!records) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
      return records;
    },
  };
}

export interface ServedFile {
  status?: number;
  body?: unknown;
  type?: string;
  /** Redirect target (path or absolute URL); `{port}` is replaced by the server's port. */
  location?: string;
}

/**
 * A TLS server on loopback that answers as many publisher hosts as the test cert covers, from a
 * table the test edits: `web.set('pub.test', '/.well-known/adagents.json', {body: {...}})`.
 * Unknown paths answer 404. Counts requests per host+path.
 */
export function startPublisherWeb() {
  const files = new Map<string, ServedFile>();
  const hits = new Map<string, number>();
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: TEST_CERT, key: TEST_KEY },
    fetch(req): Response {
      const url = new URL(req.url);
      const key = `${url.hostname}${url.pathname}`;
      hits.set(key, (hits.get(key) ?? 0) + 1);
      const file = files.get(key);
      if (!file) return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } });
      if (file.location) return new Response(null, { status: file.status ?? 302, headers: { location: file.location.replace('{port}', String(server.port)) } });
      const body = typeof file.body === 'string' ? file.body : JSON.stringify(file.body);
      return new Response(body, { status: file.status ?? 200, headers: { 'content-type': file.type ?? 'application/json' } });
    },
  });
  return {
    port: server.port!,
    origin: `https://{domain}:${server.port}`,
    set(host: string, path: string, file: ServedFile) {
      files.set(`${host}${path}`, file);
    },
    remove(host: string, path: string) {
      files.delete(`${host}${path}`);
    },
    hits: (host: string, path: string) => hits.get(`${host}${path}`) ?? 0,
    stop: () => server.stop(true),
  };
}

/** Resolves every name under the given suffixes to 127.0.0.1, and the listed names to their table entry. */
export function loopbackResolver(suffixes: string[], table: Record<string, string[]> = {}): Resolver {
  return {
    async lookup(host) {
      if (table[host]) return table[host]!;
      if (suffixes.some((s) => host === s || host.endsWith(`.${s}`))) return ['127.0.0.1'];
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    },
    async resolveTxt() {
      return [];
    },
  };
}

export const FIXTURE_ADAGENTS = { authorized_agents: [{ url: 'https://agent.example', authorized_for: 'all' }] };

/**
 * Routes of the crawler's loopback fixture (one handler serves an http and an https server):
 * documents, wrong types, oversized and slow answers, and redirects of every kind.
 */
export function crawlFixtureRoutes(req: Request, tlsPort: () => number): Response | Promise<Response> {
  const url = new URL(req.url);
  const host = req.headers.get('host') ?? '';
  const tls = (name: string, path: string) => `https://${name}:${tlsPort()}${path}`;
  switch (url.pathname) {
    case '/valid.json':
      return Response.json({ ...FIXTURE_ADAGENTS, served_to: host });
    case '/wrong-type':
      return new Response('<html></html>', { headers: { 'content-type': 'text/html' } });
    case '/big-declared':
      return new Response('x'.repeat(5000), { headers: { 'content-type': 'application/json' } });
    case '/big-streamed': {
      // No Content-Length: the cap must hold while streaming.
      let sent = 0;
      const stream = new ReadableStream({
        pull(controller) {
          if (sent >= 1_000_000) return controller.close();
          sent += 10_000;
          controller.enqueue(new Uint8Array(10_000).fill(32));
        },
      });
      return new Response(stream, { headers: { 'content-type': 'application/json' } });
    }
    case '/slow':
      return new Promise((resolve) => setTimeout(() => resolve(Response.json(FIXTURE_ADAGENTS)), 3000));
    case '/slow-body': {
      const stream = new ReadableStream({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode('{"a":'));
          await Bun.sleep(3000);
          controller.enqueue(new TextEncoder().encode('1}'));
          controller.close();
        },
      });
      return new Response(stream, { headers: { 'content-type': 'application/json' } });
    }
    case '/to-same-site':
      return Response.redirect(tls('www.pub.test', '/valid.json'), 302);
    case '/to-other-site':
      return Response.redirect(tls('other.test', '/valid.json'), 302);
    case '/to-http':
      return Response.redirect(`http://pub.test:${tlsPort()}/valid.json`, 301);
    case '/to-private':
      return Response.redirect(tls('intranet.pub.test', '/valid.json'), 302);
    case '/loop-a':
      return Response.redirect('/loop-b', 302);
    case '/loop-b':
      return Response.redirect('/loop-a', 302);
    case '/chain': {
      const n = Number(url.searchParams.get('n') ?? 0);
      return n > 0 ? Response.redirect(`/chain?n=${n - 1}`, 302) : Response.json(FIXTURE_ADAGENTS);
    }
    case '/not-found':
      return new Response('nope', { status: 404, headers: { 'content-type': 'text/plain' } });
    default:
      return new Response('not found', { status: 404 });
  }
}
