import { DatabaseUnavailableError } from '../../core/ports/database.ts';

/** Where a DATABASE_URL points, for postgres.js and for messages (never the password). */
export interface Target {
  /** Explicit host/port options: postgres.js misreads a bracketed IPv6 host in a URL. */
  host?: string[];
  port?: number[];
  /** `user@host:port/db`, safe to print. */
  display: string;
}

export function parseTarget(url: string): Target {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { display: 'the configured server' };
  }
  const port = Number(parsed.port || 5432);
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  const user = parsed.username ? `${decodeURIComponent(parsed.username)}@` : '';
  const display = `${user}${parsed.hostname || 'localhost'}:${port}${parsed.pathname}`;
  return parsed.hostname.startsWith('[') ? { host: [host], port: [port], display } : { display };
}

// Connection-level failures (postgres.js codes, socket errors, SQLSTATE classes 08, 53300, 57P0x,
// and 57014: the statement timeout) mean "not now", not "wrong request".
const UNAVAILABLE_CODES = new Set([
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '53300',
  '57014',
  '57P01',
  '57P02',
  '57P03',
]);

/**
 * The session itself is gone (closed, reset, or ended by the server), as opposed to a statement
 * refused on a live one (a statement timeout): nothing more may be written on it.
 */
export function isConnectionLost(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && (CONNECTION_LOST_CODES.has(code) || code.startsWith('08'));
}
const CONNECTION_LOST_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', '57P01', '57P02']);

export function isUnavailable(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'));
}

/** The error's code (postgres.js, socket or SQLSTATE), when it has one. */
function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** What failed, in words (for the start-up hint). */
export function describeConnectFailure(error: unknown): string {
  const code = (error as { code?: string } | null)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'the connection was refused (is Postgres running and listening there?)';
    case 'CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return 'no answer before the connect timeout (firewall, wrong host, or the server is down?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case '28P01':
    case '28000':
      return 'authentication failed (check the user and password)';
    case '3D000':
      return 'the database does not exist';
    default:
      return `${code ? `${code}: ` : ''}${(error as Error)?.message ?? 'unknown error'}`;
  }
}

export function unavailable(error: unknown): DatabaseUnavailableError {
  if (error instanceof DatabaseUnavailableError) return error;
  const code = (error as { code?: string } | null)?.code;
  return new DatabaseUnavailableError(`database unavailable${code ? ` (${code})` : ''}`, { cause: error });
}

/** Rejects with DatabaseUnavailableError when `promise` does not settle within `ms`; the late outcome is ignored. */
export function timed<T>(promise: Promise<T>, ms: number): Promise<T> {
  // One promise and one timer per statement (no race, no finally: each a promise of its own).
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DatabaseUnavailableError(`no answer from the database within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
