import { token } from '../token.ts';

/** An incoming HTTP request as it arrived: the bytes a signature covers. */
export interface SignedRequest {
  method: string;
  /** Absolute URL as the client addressed it (the public URL behind a proxy). */
  url: string;
  headers: Headers;
  body: Uint8Array;
}

export interface VerificationContext {
  /** Protocol operations (task names) the request carries; policy (`required_for`) applies to these. */
  operations: readonly string[];
  /** A push registration in the request carries `authentication` credentials (always requires a signature). */
  webhookCredentials: boolean;
}

export type RequestVerification =
  /** `signed` false: unsigned and allowed by the policy. */
  | { ok: true; signed: boolean; keyid?: string; signer?: string }
  /** A `request_signature_*` code (answered 401 with `WWW-Authenticate: Signature error="<code>"`). */
  | { ok: false; code: string; message: string };

/**
 * RFC 9421 verification of incoming (buyer-signed) requests under the agent's published
 * `request_signing` policy: a present signature is always verified (a malformed one is never
 * treated as absent); an unsigned request is refused for operations the policy requires.
 */
export interface RequestVerifierPort {
  verify(request: SignedRequest, context: VerificationContext): Promise<RequestVerification>;
  /** The policy published as `request_signing` in `get_{ns}_capabilities`. */
  readonly policy: {
    coversContentDigest: 'required' | 'forbidden' | 'either';
    requiredFor: readonly string[];
    /** Operations whose signatures are verified when present; absent: every task of the deployment. */
    supportedFor?: readonly string[];
  };
}

export const RequestVerifier = token<RequestVerifierPort>('core.request-verifier');
