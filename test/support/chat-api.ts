/** One scripted answer of the loopback chat-completions API (default: the recorded answer). */
export type ChatAnswer = { status?: number; body?: string; delayMs?: number; headers?: Record<string, string> };

/**
 * A loopback server that answers `POST /v1/chat/completions` like an OpenAI-compatible API: the next
 * scripted answer of `queue`, else `recorded`; every request is kept in `seen`.
 */
export function startChatApi(recorded: string) {
  const queue: ChatAnswer[] = [];
  const seen: { authorization: string | null; body: any }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      if (new URL(req.url).pathname !== '/v1/chat/completions' || req.method !== 'POST') return new Response('no', { status: 404 });
      seen.push({ authorization: req.headers.get('authorization'), body: await req.json() });
      const next = queue.shift() ?? { body: recorded };
      // The API being slow (the timeout cases), not the test waiting.
      if (next.delayMs) await Bun.sleep(next.delayMs);
      return new Response(next.body ?? '{}', { status: next.status ?? 200, headers: { 'content-type': 'application/json', ...next.headers } });
    },
  });
  return { queue, seen, baseUrl: `http://127.0.0.1:${server.port}/v1`, stop: () => server.stop(true) };
}
