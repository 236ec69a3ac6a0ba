import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * The root logger. Synchronous stdout destination: worker transports can drop the
 * last lines when a process (or `bun test`) exits.
 */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['req.headers.authorization', '*.authorization', '*.password', '*.secret', '*.credentials', '*.apiKey'],
        censor: '[redacted]',
      },
    },
    pino.destination({ fd: 1, sync: true }),
  );
}
