import codes from './schemas/error-codes.json' with { type: 'json' };

/** Standard error codes of both AdCP versions deployed clients speak (enums/error-code.json). */
export const ERROR_CODES_3_0: ReadonlySet<string> = new Set(codes['3.0.6']);
export const ERROR_CODES_3_1: ReadonlySet<string> = new Set(codes['3.1.19']);

/**
 * Codes of the seed protocol (and of this framework) outside the AdCP enums, with the standard code
 * that means the same. Every target is in 3.0.6's (smaller) enum, so both versions understand it.
 */
const STANDARD_FOR: Record<string, string> = {
  SIGNAL_AGENT_SEGMENT_NOT_FOUND: 'SIGNAL_NOT_FOUND',
  AGENT_NOT_FOUND: 'REFERENCE_NOT_FOUND',
  AGENT_ACCESS_DENIED: 'PERMISSION_DENIED',
  DEPLOYMENT_UNAUTHORIZED: 'PERMISSION_DENIED',
  ALREADY_ACTIVATED: 'INVALID_STATE',
  ACTIVATION_FAILED: 'INVALID_STATE',
  UNAUTHORIZED: 'AUTH_REQUIRED',
  NOT_FOUND: 'REFERENCE_NOT_FOUND',
  GONE: 'REFERENCE_NOT_FOUND',
  UNSUPPORTED_MEDIA_TYPE: 'INVALID_REQUEST',
  PAYLOAD_TOO_LARGE: 'INVALID_REQUEST',
  INVALID_FORMAT_ID: 'INVALID_REQUEST',
  UPSTREAM_FAILED: 'SERVICE_UNAVAILABLE',
  UPSTREAM_TIMEOUT: 'SERVICE_UNAVAILABLE',
};

/** Fallback by HTTP status for a code nobody mapped. */
function byStatus(status: number): string {
  if (status === 401) return 'AUTH_REQUIRED';
  if (status === 403) return 'PERMISSION_DENIED';
  if (status === 404 || status === 410) return 'REFERENCE_NOT_FOUND';
  if (status === 409) return 'CONFLICT';
  if (status === 422) return 'VALIDATION_ERROR';
  if (status === 429) return 'RATE_LIMITED';
  if (status >= 500) return 'SERVICE_UNAVAILABLE';
  return 'INVALID_REQUEST';
}

/**
 * The standard code for `code`: itself when either version defines it (IDEMPOTENCY_IN_FLIGHT is
 * 3.1-only and has no 3.0 equivalent), else its mapped equivalent, else the code for its status.
 */
export function standardErrorCode(code: string, status: number): string {
  if (ERROR_CODES_3_0.has(code) || ERROR_CODES_3_1.has(code)) return code;
  return STANDARD_FOR[code] ?? byStatus(status);
}
