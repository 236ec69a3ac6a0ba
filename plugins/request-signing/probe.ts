import type { HttpRoute } from '../../core/http.ts';
import { readCapped } from '../../lib/streams.ts';
import { failureResponse } from '../../lib/rfc9421/verify.ts';
import { carriesWebhookCredentials, signedRequest, type RequestVerifierFn } from '../../lib/rfc9421/request.ts';

function jsonOrNull(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

/**
 * The verify-only endpoint a black-box grader addresses (the signed_requests storyboard posts each
 * vector to `{agent url}/{ns}/<operation>`): the request is checked as a call of the operation its
 * last path segment names and answered 200 with what was verified, or 401 `WWW-Authenticate:
 * Signature error="<code>"`. Nothing is executed, so an accepted vector has no side effect.
 */
export function probeRoutes(
  mounts: readonly string[],
  namespace: string,
  verify: RequestVerifierFn,
  server: { publicUrl?: string; maxBodyBytes: number },
): HttpRoute[] {
  return mounts.map((mount) => ({
    method: 'POST',
    path: `${mount.replace(/\/+$/, '')}/${namespace}/*`,
    async handle(request) {
      const body = await readCapped(request.body, server.maxBodyBytes);
      if (!body) return Response.json({ error: 'payload_too_large', message: `Request body exceeds ${server.maxBodyBytes} bytes` }, { status: 413 });
      const operation = new URL(request.url).pathname.split('/').filter(Boolean).pop()!;
      const result = await verify(signedRequest(server.publicUrl, request, body), {
        operations: [operation],
        webhookCredentials: carriesWebhookCredentials(jsonOrNull(body)),
      });
      if (!result.ok) return failureResponse(result);
      return Response.json(result.signed ? { operation, signed: true, keyid: result.keyid } : { operation, signed: false });
    },
  }));
}
