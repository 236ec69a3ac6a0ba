import pino from 'pino';
import type { Logger } from '../core/log.ts';

export interface AccessEntry {
  requestId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
}

/**
 * One JSON line per request, in the root logger's format and destination (null when the level
 * drops them: the caller then builds no entry). The line is built by
 * hand: it holds no user-controlled objects to redact, and a generic pino call (serializers,
 * redaction) would cost more than serving a cached lookup.
 */
export function accessLogger(logger: Logger): ((entry: AccessEntry) => void) | null {
  if (!logger.isLevelEnabled('info')) return null;
  const stream = (logger as any)[pino.symbols.streamSym] as { write(line: string): void } | undefined;
  if (!stream?.write) return (e) => logger.info({ component: 'http', ...e }, 'request');
  return (e) =>
    stream.write(
      `{"level":30,"time":${Date.now()},"component":"http","requestId":${JSON.stringify(e.requestId)},"method":"${e.method}","path":${JSON.stringify(e.path)},"status":${e.status},"ms":${e.ms},"msg":"request"}\n`,
    );
}
