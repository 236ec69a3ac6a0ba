import type { SigningKey } from '../../core/ports/signer.ts';
import { contentDigest } from './digest.ts';
import { REQUIRED_COMPONENTS, serializeInnerList, serializeSignature, serializeSignatureInput, signatureParamsList } from './fields.ts';
import { signatureBase } from './base.ts';
import { toBase64Url } from './binary.ts';

export const MAX_WINDOW_SECONDS = 300;

export const webhookTag = (namespace: string) => `${namespace}/webhook-signing/v1`;
export const requestTag = (namespace: string) => `${namespace}/request-signing/v1`;

export interface SignRequest {
  key: SigningKey;
  namespace: string;
  url: string;
  body: Uint8Array;
  method?: string;
  now: Date;
  /** Validity window (<= 300 s). */
  windowSeconds?: number;
  /** Fixed nonce (tests); default 16 random bytes, base64url. */
  nonce?: string;
}

/**
 * Sign a message: covers `components` (each covered header must be in `headers`) under `tag`, and
 * returns `headers` plus `Signature-Input` and `Signature`. Throws TargetUriError when the URL
 * cannot be canonicalized (such a URL must not be signed).
 */
async function sign(req: SignRequest, tag: string, components: readonly string[], headers: Record<string, string>): Promise<Record<string, string>> {
  const window = Math.min(req.windowSeconds ?? MAX_WINDOW_SECONDS, MAX_WINDOW_SECONDS);
  const created = Math.floor(req.now.getTime() / 1000);
  const list = signatureParamsList(components, {
    created,
    expires: created + window,
    nonce: req.nonce ?? toBase64Url(crypto.getRandomValues(new Uint8Array(16))),
    keyid: req.key.keyid,
    alg: req.key.alg,
    tag,
  });
  const base = signatureBase(components, serializeInnerList(list), { method: req.method ?? 'POST', url: req.url, headers: new Headers(headers) });
  const signature = await req.key.sign(new TextEncoder().encode(base));
  return { ...headers, 'Signature-Input': serializeSignatureInput(list), Signature: serializeSignature(signature) };
}

/**
 * Sign one webhook POST with the RFC 9421 webhook profile. Returns the headers to send
 * (`Content-Type`, `Content-Digest`, `Signature-Input`, `Signature`).
 */
export async function signWebhook(req: SignRequest): Promise<Record<string, string>> {
  return sign(req, webhookTag(req.namespace), REQUIRED_COMPONENTS, {
    'Content-Type': 'application/json',
    'Content-Digest': contentDigest(req.body),
  });
}

/**
 * Sign an outgoing request with the RFC 9421 request-signing profile: `@method`, `@target-uri`,
 * `@authority`, and for a body `content-type` and (unless the verifier forbids it)
 * `content-digest`. Returns the headers to set, lower-case (the body's `content-type` included:
 * the caller must not send another).
 */
export async function signRequest(req: SignRequest & { coverDigest?: boolean; contentType?: string }): Promise<Record<string, string>> {
  const components = ['@method', '@target-uri', '@authority'];
  const headers: Record<string, string> = {};
  if (req.body.byteLength > 0) {
    headers['content-type'] = req.contentType ?? 'application/json';
    components.push('content-type');
    if (req.coverDigest !== false) {
      headers['content-digest'] = contentDigest(req.body, 'standard');
      components.push('content-digest');
    }
  }
  const signed = await sign(req, requestTag(req.namespace), components, headers);
  return Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toLowerCase(), v]));
}

/** Signs outgoing requests (agent clients take one): the lower-case headers to set on a request. */
export type SignRequestFn = (request: { method: string; url: string; body: Uint8Array; contentType?: string }) => Promise<Record<string, string>>;
