/** Recovery hint carried by every protocol error (SUPPLEMENT "Tasks"). */
export type Recovery = 'transient' | 'correctable' | 'terminal';

export interface ProtocolErrorOptions {
  /** HTTP status a REST host answers with; defaults from the code. */
  status?: number;
  field?: string;
  suggestion?: string;
  retryAfter?: number;
  details?: Record<string, unknown>;
  recovery?: Recovery;
  /** Extra top-level members of the REST error body (e.g. `retry_after`). */
  extra?: Record<string, unknown>;
}

const STATUS_BY_CODE: Record<string, number> = {
  INVALID_REQUEST: 400,
  VALIDATION_ERROR: 400,
  INVALID_FORMAT_ID: 400,
  AUTH_REQUIRED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  IDEMPOTENCY_CONFLICT: 409,
  IDEMPOTENCY_IN_FLIGHT: 409,
  IDEMPOTENCY_EXPIRED: 422,
  GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
  UPSTREAM_FAILED: 502,
  UPSTREAM_TIMEOUT: 504,
};

const RECOVERY_BY_CODE: Record<string, Recovery> = {
  RATE_LIMITED: 'transient',
  SERVICE_UNAVAILABLE: 'transient',
  IDEMPOTENCY_IN_FLIGHT: 'transient',
  UPSTREAM_TIMEOUT: 'transient',
  UPSTREAM_FAILED: 'transient',
};

/**
 * The one error type features raise. Hosts map it to their wire shape:
 * REST `{error, message}` + status, MCP `isError` + `{code, message}`, signals `{errors:[...]}`.
 */
export class ProtocolError extends Error {
  readonly code: string;
  readonly status: number;
  readonly field?: string;
  readonly suggestion?: string;
  readonly retryAfter?: number;
  readonly details?: Record<string, unknown>;
  readonly recovery: Recovery;
  readonly extra?: Record<string, unknown>;

  constructor(code: string, message: string, options: ProtocolErrorOptions = {}) {
    super(message);
    this.name = 'ProtocolError';
    this.code = code;
    this.status = options.status ?? STATUS_BY_CODE[code] ?? 400;
    this.field = options.field;
    this.suggestion = options.suggestion;
    this.retryAfter = options.retryAfter;
    this.details = options.details;
    this.extra = options.extra;
    this.recovery = options.recovery ?? RECOVERY_BY_CODE[code] ?? (this.status >= 500 ? 'transient' : 'correctable');
  }

  /** The task-protocol error object (SUPPLEMENT "Tasks"). */
  toTaskError(): Record<string, unknown> {
    const out: Record<string, unknown> = { code: this.code, message: this.message };
    if (this.field !== undefined) out.field = this.field;
    if (this.suggestion !== undefined) out.suggestion = this.suggestion;
    if (this.retryAfter !== undefined) out.retry_after = this.retryAfter;
    if (this.details !== undefined) out.details = this.details;
    out.recovery = this.recovery;
    return out;
  }
}

export const invalid = (message: string, field?: string) => new ProtocolError('INVALID_REQUEST', message, { field });
export const notFound = (message: string) => new ProtocolError('NOT_FOUND', message);
export const conflict = (message: string) => new ProtocolError('CONFLICT', message);
export const forbidden = (message: string) => new ProtocolError('PERMISSION_DENIED', message);
