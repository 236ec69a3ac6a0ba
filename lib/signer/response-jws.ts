import { createHash } from 'node:crypto';
import type { SigningKey } from '../../core/ports/signer.ts';
import { canonicalJson } from '../canonical-json.ts';
import { joseAlg } from './keys.ts';

/** The decoded-payload JWS envelope of a signed task answer (core/response-payload-jws-envelope.json). */
export interface ResponseJws {
  protected: string;
  payload: Record<string, unknown>;
  signature: string;
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');

/**
 * `sha256:` + unpadded base64url SHA-256 of the canonical JSON of the request-binding object.
 * canonicalJson equals RFC 8785 (JCS) for what is hashed and signed here: strings and integers, no floats.
 */
export function requestHash(binding: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(binding)).digest('base64url')}`;
}

/**
 * Sign a designated task's answer with the payload-envelope profile: protected header
 * `{alg, kid, typ: "{ns}-response-payload+jws"}` (no `b64`), the payload signed as the base64url of its
 * canonical JSON, `payload` carried decoded. Verifiers re-canonicalize the payload and check an
 * ordinary compact JWS (`protected.base64url(JCS(payload)).signature`) against the key of `kid`,
 * which they accept only with `{ns}_use: "response-signing"`.
 */
export async function signResponsePayload(input: {
  key: SigningKey;
  namespace: string;
  task: string;
  brandDomain: string;
  agentUrl: string;
  requestBinding: unknown;
  response: Record<string, unknown>;
  now: Date;
  ttlSeconds: number;
}): Promise<ResponseJws> {
  const typ = `${input.namespace}-response-payload+jws`;
  const iat = Math.floor(input.now.getTime() / 1000);
  const payload = {
    typ,
    task: input.task,
    brand_domain: input.brandDomain,
    agent_url: input.agentUrl,
    request_hash: requestHash(input.requestBinding),
    iat,
    exp: iat + input.ttlSeconds,
    response: input.response,
  };
  const protectedHeader = b64url(canonicalJson({ alg: joseAlg(input.key.alg), kid: input.key.keyid, typ }));
  const signingInput = `${protectedHeader}.${b64url(canonicalJson(payload))}`;
  const signature = await input.key.sign(new TextEncoder().encode(signingInput));
  return { protected: protectedHeader, payload, signature: b64url(signature) };
}
