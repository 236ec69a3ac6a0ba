import type { ProtocolError } from '../../core/errors.ts';

/** REST error body `{error, message, ...extra}`; `error` is the lower-case code. */
export function errorResponse(error: ProtocolError): Response {
  const body: Record<string, unknown> = { error: error.code.toLowerCase(), message: error.message };
  if (error.field) body.field = error.field;
  if (error.suggestion) body.suggestion = error.suggestion;
  if (error.retryAfter !== undefined) body.retry_after = error.retryAfter;
  if (error.details) body.details = error.details;
  Object.assign(body, error.extra);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (error.retryAfter !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfter)));
  if (error.status === 401) headers['www-authenticate'] = 'Bearer';
  return new Response(JSON.stringify(body), { status: error.status, headers });
}
