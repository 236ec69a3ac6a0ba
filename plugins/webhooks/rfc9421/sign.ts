import type { SigningKey } from '../../../core/ports/signer.ts';
import { contentDigest } from './digest.ts';
import { REQUIRED_COMPONENTS, serializeInnerList, serializeSignature, serializeSignatureInput, signatureParamsList } from './fields.ts';
import { signatureBase } from './base.ts';
import { toBase64Url } from './binary.ts';

export const MAX_WINDOW_SECONDS = 300;

export const webhookTag = (namespace: string) => `${namespace}/webhook-signing/v1`;

export interface SignRequest {
  key: SigningKey;
  namespace: string;
  url: string;
  body: Uint8Array;
  method?: string;
  now?: Date;
  /** Validity window (<= 300 s). */
  windowSeconds?: number;
  /** Fixed nonce (tests); default 16 random bytes, base64url. */
  nonce?: string;
}

/**
 * Sign one webhook POST with the RFC 9421 webhook profile. Returns the headers to send
 * (`Content-Type`, `Content-Digest`, `Signature-Input`, `Signature`). Throws TargetUriError when
 * the URL cannot be canonicalized (such a URL must not be signed).
 */
export async function signWebhook(req: SignRequest): Promise<Record<string, string>> {
  const window = Math.min(req.windowSeconds ?? MAX_WINDOW_SECONDS, MAX_WINDOW_SECONDS);
  const created = Math.floor((req.now ?? new Date()).getTime() / 1000);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'Content-Digest': contentDigest(req.body),
  };
  const list = signatureParamsList(REQUIRED_COMPONENTS, {
    created,
    expires: created + window,
    nonce: req.nonce ?? toBase64Url(crypto.getRandomValues(new Uint8Array(16))),
    keyid: req.key.keyid,
    alg: req.key.alg,
    tag: webhookTag(req.namespace),
  });
  const base = signatureBase(REQUIRED_COMPONENTS, serializeInnerList(list), { method: req.method ?? 'POST', url: req.url, headers: new Headers(headers) });
  const signature = await req.key.sign(new TextEncoder().encode(base));
  headers['Signature-Input'] = serializeSignatureInput(list);
  headers['Signature'] = serializeSignature(signature);
  return headers;
}
