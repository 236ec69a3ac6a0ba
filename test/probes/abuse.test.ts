import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createServer, type Server } from 'node:net';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import rateLimit from '../../plugins/rate-limit/index.ts';
import registryProbes from '../../plugins/registry-probes/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { dropSchema, uniqueSchema } from '../support/db.ts';
import { TEST_CERT, TEST_KEY, loopbackResolver } from '../support/loopback.ts';

/**
 * The public probes are not an amplifier or a port scanner: rate limits per client and per
 * target (in the database, so every instance counts together), a cap on probes in flight, a short
 * cache, default ports only, and one coarse reason for every network-level failure.
 */
const clock = new ManualClock(new Date('2026-04-01T00:00:00Z'));
const hits: Record<string, number> = {};
// Requests to held.pub.test wait until the test opens the gate.
let openGate: () => void = () => {};
const gate = new Promise<void>((r) => (openGate = r));
let holding: () => void = () => {};
const isHolding = new Promise<void>((r) => (holding = r));
let upstream: ReturnType<typeof Bun.serve>;
let plain: ReturnType<typeof Bun.serve>;
let closedPort: number;
let app: TestServer;
const schema = uniqueSchema('probeabuse');

/** A port nothing listens on. */
async function freePort(): Promise<number> {
  const s: Server = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

beforeAll(async () => {
  upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    tls: { cert: TEST_CERT, key: TEST_KEY },
    async fetch(req) {
      const host = new URL(req.url).hostname;
      hits[host] = (hits[host] ?? 0) + 1;
      if (host === 'held.pub.test') {
        holding();
        await gate;
      }
      if (host === 'porty.pub.test') {
        return Response.json({
          name: 'Porty',
          supportedInterfaces: [{ url: 'https://porty.pub.test:9/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        });
      }
      return new Response('not an agent', { status: 404 });
    },
  });
  // An open port speaking plain HTTP (a TLS client gets a protocol error there, not a refusal).
  plain = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('plain') });
  closedPort = await freePort();
  app = await startServer(
    'pglite',
    schema,
    [
      crawlerHttp({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test']), ca: TEST_CERT }),
      rateLimit(),
      registryProbes({
        timeoutMs: 2000,
        allowedPorts: [upstream.port!, plain.port!, closedPort],
        perIpPerMinute: 8,
        perTargetPerMinute: 3,
        maxConcurrent: 1,
        cacheSeconds: 60,
      }),
      restHost(),
    ],
    { overrides: [[Clock, clock]] },
  );
});
afterAll(async () => {
  await app.close();
  upstream.stop(true);
  plain.stop(true);
  await dropSchema('pglite', schema);
});

const probe = (url: string) => app.fetch(`/api/public/discover-agent?url=${encodeURIComponent(url)}`);
const at = (host: string, path = '/mcp', port = upstream.port) => `https://${host}:${port}${path}`;

test('an answer is cached briefly: the same probe again makes no outbound request until the cache expires', async () => {
  expect((await probe(at('cache.pub.test'))).status).toBe(502);
  const first = hits['cache.pub.test']!;
  expect(first).toBeGreaterThan(0);
  expect((await probe(at('cache.pub.test'))).status).toBe(502);
  expect(hits['cache.pub.test']).toBe(first);
  clock.advance(61_000);
  expect((await probe(at('cache.pub.test'))).status).toBe(502);
  expect(hits['cache.pub.test']).toBeGreaterThan(first);
});

test('per target: the 4th probe of one host within a minute is 429 whoever asks; other hosts still go', async () => {
  clock.advance(61_000);
  for (const path of ['/a', '/b', '/c']) expect((await probe(at('target.pub.test', path))).status).toBe(502);
  const refused = await probe(at('target.pub.test', '/d'));
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(((await refused.json()) as { message: string }).message).toContain('per target');
  expect((await probe(at('elsewhere.pub.test'))).status).toBe(502);
});

test('per client: past its limit a client gets 429 for any target, until the window resets', async () => {
  clock.advance(61_000);
  const statuses: number[] = [];
  for (let i = 0; i < 9; i++) statuses.push((await probe(at(`client${i}.pub.test`))).status);
  expect(statuses).toEqual([502, 502, 502, 502, 502, 502, 502, 502, 429]);
  clock.advance(61_000);
  expect((await probe(at('client9.pub.test'))).status).toBe(502);
});

test('probes in flight are capped: beyond the cap, 503 with Retry-After instead of more outbound load', async () => {
  clock.advance(61_000);
  const first = probe(at('held.pub.test'));
  await isHolding; // the upstream holds the first probe's request
  const second = await probe(at('other.pub.test'));
  expect(second.status).toBe(503);
  expect(second.headers.get('retry-after')).toBe('5');
  expect(hits['other.pub.test']).toBeUndefined();
  openGate();
  expect((await first).status).toBe(502);
});

test('only default ports (and configured ones): the URL and every request the probe makes', async () => {
  clock.advance(61_000);
  const direct = await probe('https://agent.pub.test:8443/mcp');
  expect(direct.status).toBe(400);
  expect(((await direct.json()) as { message: string }).message).toContain('Port 8443 is not probed');
  // The agent card points the JSON-RPC endpoint at port 9: the skill call is refused, not made.
  const viaCard = await app.fetch(`/api/public/agent-formats?protocol=a2a&url=${encodeURIComponent(at('porty.pub.test', '/'))}`);
  expect(viaCard.status).toBe(502);
  expect(((await viaCard.json()) as { message: string }).message).toContain('Port 9 is not probed');
});

test('failures have coarse reasons: a closed port and an open non-TLS port read the same', async () => {
  clock.advance(61_000);
  const closed = (await (await probe(at('closed.pub.test', '/mcp', closedPort))).json()) as { details: Record<string, string> };
  const plainText = (await (await probe(at('plain.pub.test', '/mcp', plain.port))).json()) as { details: Record<string, string> };
  expect(closed.details).toEqual({ mcp: 'could not connect', a2a: 'could not connect' });
  expect(plainText.details).toEqual(closed.details);
  expect(JSON.stringify([closed, plainText])).not.toMatch(/ECONN|EPROTO|SSL|TLS|socket/i);
});
