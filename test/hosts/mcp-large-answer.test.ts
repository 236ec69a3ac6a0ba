import { expect, test } from 'bun:test';
import { answer, type FastHandlers } from '../../hosts/shared/mcp-fast-path.ts';

// An answer ready only after an await goes out whole (Content-Length) under 15 KiB and as one chunk
// above (Bun sends a larger awaited body uncorked, a send per header piece); the bytes are the same.
const handlers = (text: string): FastHandlers => ({
  serverInfo: { name: 't', version: '1' },
  capabilities: {},
  listTools: () => ({ tools: [] }),
  callTool: async () => ({ content: [{ type: 'text', text }] }),
});
const call = { kind: 'tools/call' as const, id: 7, params: { name: 'x' } };

for (const size of [100, 15_000, 16_000, 200_000]) {
  for (const sse of [true, false]) {
    test(`an awaited answer of ${size} characters (${sse ? 'SSE' : 'JSON'}) keeps its bytes and headers`, async () => {
      // Non-ASCII too: the limit is on bytes, not characters.
      const text = 'é'.repeat(size / 2) + 'a'.repeat(size / 2);
      const message = JSON.stringify({ result: { content: [{ type: 'text', text }] }, jsonrpc: '2.0', id: 7 });
      const res = await answer(handlers(text), call, sse);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(sse ? 'text/event-stream' : 'application/json');
      expect(await res.text()).toBe(sse ? `event: message\ndata: ${message}\n\n` : message);
    });
  }
}
