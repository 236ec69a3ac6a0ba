import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * The root logger, writing JSON lines to stdout through an asynchronous buffered destination in
 * this thread (a synchronous write per line costs more than serving a cached request; worker
 * transports can drop the last lines at exit). Pending lines are flushed at exit.
 */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  // Asynchronous: a line is written at once when the stream is idle and coalesced with others
  // while a write is in flight. Small chunks keep sonic-boom's per-line length bookkeeping cheap.
  const destination = pino.destination({ fd: 1, sync: false, minLength: 0, maxWrite: 4096 });
  process.once('exit', () => destination.flushSync());
  return pino(
    {
      level,
      base: undefined,
      redact: {
        // Explicit paths only: wildcard paths are re-parsed on every log call.
        paths: ['authorization', 'password', 'secret', 'credentials', 'apiKey', 'token', 'key', 'headers.authorization', 'req.headers.authorization'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
