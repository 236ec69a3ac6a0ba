import type { HttpRoute } from '../../core/http.ts';
import type { Admission, TaskGatewayPort } from '../../core/ports/task-gateway.ts';
import { trustedBaseUrl, untrustedHostResponse } from '../../lib/urls.ts';

/** What the server block of the config says about where this deployment is reached. */
type Server = { publicUrl?: string; host: string };

/** RFC 9728: metadata of the resource at `/<path>` lives at `/.well-known/oauth-protected-resource/<path>`. */
export const PROTECTED_RESOURCE_PREFIX = '/.well-known/oauth-protected-resource';

type Refusal = Extract<Admission, { ok: false }>;

/**
 * The mount's public URL and where its protected-resource metadata is served, from configuration or a
 * trusted (loopback or configured) Host; an untrusted Host gets root-relative URLs, never its own echo.
 */
export function mountUrls(server: Server, request: Request, mountPath: string): { resource: string; metadata: string } {
  const base = trustedBaseUrl(server, request) ?? '';
  return { resource: base + mountPath, metadata: base + PROTECTED_RESOURCE_PREFIX + mountPath };
}

/**
 * The `WWW-Authenticate` challenge of a refusal: Bearer pointing at the mount's metadata when it
 * publishes one (MCP authorization spec, RFC 9728 section 5.1), else Bearer naming the mount as
 * realm (RFC 6750 section 3: API keys only, no authorization server to discover); `invalid_token`
 * when a credential was sent. Or Signature with the request-signing error code.
 */
export function challenge(refusal: Refusal, gateway: TaskGatewayPort, urls: { resource: string; metadata: string }): string {
  if (refusal.scheme === 'Signature') return `Signature error="${refusal.signatureError}"`;
  const where = gateway.authorizationServers.length ? `resource_metadata="${urls.metadata}"` : `realm="${urls.resource}"`;
  return `Bearer ${where}${refusal.credentialSent ? ', error="invalid_token"' : ''}`;
}

/**
 * `GET /.well-known/oauth-protected-resource<mountPath>`: the mount's RFC 9728 metadata, or no route
 * at all when the deployment has no authorization server (metadata naming one that does not exist
 * sends OAuth clients to a dead end; API-key-only agents publish none).
 */
export function protectedResourceRoutes(gateway: TaskGatewayPort, server: Server, mountPath: string): HttpRoute[] {
  if (!gateway.authorizationServers.length) return [];
  return [
    {
      method: 'GET',
      path: PROTECTED_RESOURCE_PREFIX + mountPath,
      handle(request) {
        // A cacheable document with absolute URLs: served only for a configured or loopback Host.
        if (trustedBaseUrl(server, request) === null) return untrustedHostResponse();
        return Response.json(gateway.protectedResource(mountUrls(server, request, mountPath).resource), {
          headers: { 'cache-control': 'public, max-age=3600' },
        });
      },
    },
  ];
}
