import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * The root logger, writing JSON lines to stdout through an asynchronous buffered destination in
 * this thread (a synchronous write per line costs more than serving a cached request; worker
 * transports can drop the last lines at exit). Pending lines are flushed every second and at exit.
 */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  const destination = pino.destination({ fd: 1, sync: false, minLength: 4096 });
  // Lines are written in 4 KB batches; a quiet server still flushes within a second.
  setInterval(() => destination.flush(), 1000).unref();
  process.once('exit', () => destination.flushSync());
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['req.headers.authorization', '*.authorization', '*.password', '*.secret', '*.credentials', '*.apiKey'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
