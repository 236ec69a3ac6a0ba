import { expect, test } from 'bun:test';
import { connect } from 'node:net';
import { Clock, ManualClock } from '../../core/ports/clock.ts';
import preset, { TEST_TOKEN } from '../../config/test-agent.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';

const NOW = new Date('2026-03-04T05:06:07.000Z');
const plugins = preset.plugins.slice(1); // startServer adds the storage plugin

/** The status line of one raw HTTP/1.1 request (fetch normalizes methods; this does not). */
function rawStatus(port: number, requestLine: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    socket.on('data', (d) => {
      out += d;
    });
    socket.on('close', () => resolve(out.split('\r\n')[0] ?? ''));
    socket.write(`${requestLine}\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  });
}

forEachDatabase<{ s: TestServer; pinned: TestServer }>(
  'host header trust, stateless MCP, methods',
  async (adapter, schema) => {
    const clock = new ManualClock(NOW);
    const s = await startServer(adapter, schema, plugins, { overrides: [[Clock, clock]] });
    const pinned = await startServer(adapter, `${schema}_p`, plugins, { env: { PUBLIC_URL: 'https://agents.example.com/' } });
    return { s, pinned };
  },
  async ({ s, pinned }) => {
    await s.close();
    await pinned.close();
  },
  (get) => {
    const cards = ['/signals/.well-known/agent-card.json', '/signals/.well-known/agent.json', '/.well-known/adagents.json'];

    test('without PUBLIC_URL, a foreign Host gets 421 instead of a cacheable document carrying it', async () => {
      for (const path of cards) {
        for (const host of ['evil.example', 'evil.example:443', `attacker.localhost.evil.example`]) {
          const res = await get().s.fetch(path, { headers: { host } });
          const text = await res.text();
          expect({ path, host, status: res.status }).toEqual({ path, host, status: 421 });
          expect(text).not.toContain('evil');
        }
      }
    });

    test('loopback Hosts are served, with their own origin', async () => {
      const port = get().s.server.port;
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
        const card = (await (await get().s.fetch(cards[0]!, { headers: { host } })).json()) as { url: string };
        expect(card.url).toBe(`http://${host}/signals/a2a`);
      }
      const doc = (await (await get().s.fetch('/.well-known/adagents.json')).json()) as { tenants: Array<{ mcp: string }>; last_updated: string };
      expect(doc.tenants[0]!.mcp).toBe(`${get().s.base}/signals/mcp`);
      // The deployment's start time from the Clock, not the epoch.
      expect(doc.last_updated).toBe(NOW.toISOString());
    });

    test('with PUBLIC_URL, every document uses it whatever the Host says', async () => {
      for (const host of ['evil.example', 'localhost']) {
        const card = (await (await get().pinned.fetch(cards[0]!, { headers: { host } })).json()) as { url: string };
        expect(card.url).toBe('https://agents.example.com/signals/a2a');
        const doc = (await (await get().pinned.fetch('/.well-known/adagents.json', { headers: { host } })).json()) as { tenants: Array<{ mcp: string }> };
        expect(doc.tenants[0]!.mcp).toBe('https://agents.example.com/signals/mcp');
      }
    });

    test('the extended card is built from each request’s own trusted base, never from an earlier request', async () => {
      const extended = async (host: string) => {
        const res = await get().s.fetch('/signals/a2a', {
          method: 'POST',
          token: TEST_TOKEN,
          headers: { host },
          json: { jsonrpc: '2.0', id: 1, method: 'agent/getAuthenticatedExtendedCard' },
        });
        return ((await res.json()) as { result: { url: string } }).result.url;
      };
      const port = get().s.server.port;
      expect(await extended(`localhost:${port}`)).toBe(`http://localhost:${port}/signals/a2a`);
      // An untrusted Host neither sees the previous caller's base nor gets its own into the card.
      expect(await extended('evil.example')).toBe('/signals/a2a');
      expect(await extended(`127.0.0.1:${port}`)).toBe(`http://127.0.0.1:${port}/signals/a2a`);
    });

    test('stateless MCP answers GET and DELETE with 405 (no SSE stream that never ends)', async () => {
      for (const method of ['GET', 'DELETE']) {
        const res = await get().s.fetch('/signals/mcp', { method, headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(5000) });
        expect({ method, status: res.status, allow: res.headers.get('allow') }).toEqual({ method, status: 405, allow: 'POST' });
        await res.body?.cancel();
      }
    });

    test('a method a route lacks is 405 with Allow; a method no route implements is 501', async () => {
      const port = get().s.server.port;
      expect(await rawStatus(port, 'POST /health HTTP/1.1')).toBe('HTTP/1.1 405 Method Not Allowed');
      expect(await rawStatus(port, 'PUT /signals/mcp HTTP/1.1')).toBe('HTTP/1.1 501 Not Implemented');
      expect(await rawStatus(port, 'PROPFIND /health HTTP/1.1')).toBe('HTTP/1.1 501 Not Implemented');
      expect(await rawStatus(port, 'PATCH /nowhere HTTP/1.1')).toBe('HTTP/1.1 501 Not Implemented');
      expect(await rawStatus(port, 'DELETE /nowhere HTTP/1.1')).toBe('HTTP/1.1 404 Not Found');
      const allowed = await get().s.fetch('/health', { method: 'POST' });
      expect(allowed.headers.get('allow')).toBe('GET');
    });
  },
);
