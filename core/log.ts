import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Log lines are joined in memory and handed to stdout in batches (100 ms after the first pending
 * line, at 64 KB, and at exit): a write per line would cost more than serving a cached request,
 * and pino's worker transports can drop the last lines at exit.
 */
let stdout: { write(line: string): void } | undefined;
function stdoutBatcher() {
  if (!stdout) {
    const sink = Bun.stdout.writer();
    let pending = '';
    let timer: ReturnType<typeof setTimeout> | null = null;
    const flush = () => {
      if (timer) clearTimeout(timer);
      timer = null;
      if (!pending) return;
      sink.write(pending);
      pending = '';
      void sink.flush();
    };
    process.once('exit', flush);
    stdout = {
      write(line: string) {
        pending += line;
        if (pending.length >= 64 * 1024) flush();
        else if (!timer) (timer = setTimeout(flush, 100)).unref();
      },
    };
  }
  return stdout;
}

/** Human-readable lines (pino-pretty, synchronous: nothing is lost at exit), loaded only for a terminal. */
function prettyStream(): { write(line: string): void } {
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return pretty({ sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'hostname,pid' });
}

/**
 * The root logger; plugins get `logger.child({ plugin })`. JSON lines, or pretty ones for a person at a terminal
 * (`format` unset and stdout a TTY, or `pretty`).
 */
export function createLogger(level = process.env.LOG_LEVEL ?? 'info', format?: 'pretty' | 'json'): Logger {
  const pretty = format ? format === 'pretty' : !!process.stdout.isTTY;
  const out = pretty ? prettyStream() : stdoutBatcher();
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
    out,
  );
}
