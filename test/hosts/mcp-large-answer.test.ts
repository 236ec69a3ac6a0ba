import { expect, test } from 'bun:test';
import { answer, type FastHandlers } from '../../hosts/shared/mcp-fast-path.ts';

// An answer ready after the request's turn goes out whole (Content-Length) under 15 KiB and as one
// chunk above (Bun sends a larger awaited body uncorked, a send per header piece); one ready within
// the turn stays whole. The bytes are the same either way.
const handlers = (text: string, afterTurn: boolean): FastHandlers => ({
  serverInfo: { name: 't', version: '1' },
  capabilities: {},
  listTools: () => ({ tools: [] }),
  callTool: async () => {
    // After the turn as a database answer comes: the request's turn has ended (its check phase ran, the
    // fast path's turn counter with it) before this resumes. A bare timer may fire before that check phase.
    if (afterTurn) await new Promise((r) => setImmediate(() => setTimeout(r, 1)));
    return { content: [{ type: 'text', text }] };
  },
});
const call = { kind: 'tools/call' as const, id: 7, params: { name: 'x' } };

/** Bytes of the test text (half two-byte characters) over the corked limit, ready after the turn. */
const big = (size: number, afterTurn: boolean) => size * 1.5 >= 16384 - 1024 && afterTurn;

for (const size of [100, 15_000, 16_000, 200_000])
  for (const sse of [true, false])
    for (const afterTurn of [true, false]) {
      test(`an answer of ${size} characters (${sse ? 'SSE' : 'JSON'}, ${afterTurn ? 'after' : 'within'} the turn) keeps its bytes and headers`, async () => {
        // Non-ASCII too: the limit is on bytes, not characters.
        const text = 'é'.repeat(size / 2) + 'a'.repeat(size / 2);
        const message = JSON.stringify({ result: { content: [{ type: 'text', text }] }, jsonrpc: '2.0', id: 7 });
        const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => answer(handlers(text, afterTurn), call, sse) });
        try {
          const res = await fetch(`http://127.0.0.1:${server.port}/`, { method: 'POST' });
          expect(res.status).toBe(200);
          expect(res.headers.get('content-type')).toBe(sse ? 'text/event-stream' : 'application/json');
          // Large and after the turn: one chunk; else whole, with its length.
          if (big(size, afterTurn)) expect(res.headers.get('transfer-encoding')).toBe('chunked');
          else expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(sse ? `event: message\ndata: ${message}\n\n` : message)));
          expect(await res.text()).toBe(sse ? `event: message\ndata: ${message}\n\n` : message);
        } finally {
          server.stop(true);
        }
      });
    }
