import type { ManualTimers } from '../../core/scheduler.ts';
import type { TestServer } from '../support/server.ts';

/** A buyer's bare webhook receiver on loopback: records every request, answers 204. */
export function startSink() {
  const received: Array<{ path: string; headers: Headers; body: any }> = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      received.push({ path: new URL(request.url).pathname, headers: request.headers, body: await request.json() });
      return new Response(null, { status: 204 });
    },
  });
  return { url: (path = '/hook') => `http://127.0.0.1:${server.port}${path}`, received, stop: () => server.stop(true) };
}

/**
 * Run the outbox delivery job once (it drains every due webhook in one run) under manual timers:
 * no waiting for time to pass, the run's requests are awaited.
 */
export async function deliverWebhooks(server: TestServer, timers: ManualTimers, pollMs: number): Promise<void> {
  timers.advance(pollMs);
  await server.deployment.scheduler.idle();
}
