import { token } from '../token.ts';
import type { PublicJwk } from './signer.ts';

/** An outgoing request about to be signed. */
export interface OutgoingRequest {
  method: string;
  url: string;
  body: Uint8Array;
  contentType?: string;
}

/**
 * Signs this deployment's outgoing agent calls (probes, capability refresh) with the RFC 9421
 * request-signing profile, under a key published with `{ns}_use: "request-signing"`.
 */
export interface RequestSignerPort {
  /** Headers to add: `Signature-Input`, `Signature` and, for a body, `Content-Type` and `Content-Digest`. */
  sign(request: OutgoingRequest): Promise<Record<string, string>>;
  /** The public key(s) to publish (the operator's brand.json `jwks_uri` points at them). */
  jwks(): { keys: PublicJwk[] };
}

export const RequestSigner = token<RequestSignerPort>('core.request-signer');
