import { token } from '../token.ts';

/** Why a legacy HMAC-signed webhook was refused. */
export type HmacFailure = 'webhook_hmac_missing' | 'webhook_hmac_malformed' | 'webhook_hmac_timestamp_invalid' | 'webhook_hmac_invalid';

/**
 * Legacy webhook HMAC-SHA256 (deprecated, removed in protocol 4.0): `X-{NS}-Signature: sha256=<hex>`
 * over `"{timestamp}.{raw body}"`, keyed by the shared secret's bytes, and `X-{NS}-Timestamp`
 * (Unix seconds). A timestamp at most 300 s away from `nowSeconds`, either way, is accepted.
 * Contract (test/contract/hmac-signer.contract.ts, with the reference vectors).
 */
export interface HmacSignerPort {
  /** Reason a secret is unusable (too short, no entropy), or null when acceptable. */
  checkSecret(secret: string): string | null;
  /** Header name/value pairs to send with `body`; throws for a secret `checkSecret` refuses. */
  sign(secret: string, body: Uint8Array, timestampSeconds: number): Record<string, string>;
  /** Verify against the current and (during rotation) previous secrets, in constant time. */
  verify(secrets: readonly string[], body: Uint8Array, headers: Headers, nowSeconds: number): { ok: true } | { ok: false; code: HmacFailure };
}

export const HmacSigner = token<HmacSignerPort>('core.hmac-signer');
