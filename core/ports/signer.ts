import { token } from '../token.ts';

export type SignatureAlg = 'ed25519' | 'ecdsa-p256-sha256';

/** What a key signs; published as the JWK's `{ns}_use` so verifiers refuse a key used out of purpose. */
export type KeyPurpose = 'webhook-signing' | 'response-signing';

/** A public JWK as published in a JWKS. */
export type PublicJwk = JsonWebKey & { kid: string; alg?: string; use?: string; key_ops?: string[]; [extra: string]: unknown };

/** One signing key. `sign` returns raw signature bytes (P-256: r||s, 64 bytes). */
export interface SigningKey {
  readonly keyid: string;
  readonly alg: SignatureAlg;
  sign(data: Uint8Array): Promise<Uint8Array>;
  readonly publicJwk: PublicJwk;
}

/**
 * The signer port: the deployment's webhook-signing keys. Several keys may be published
 * (rotation); exactly one is active for new signatures; revoked key ids are listed.
 * Contract (test/contract/signer.contract.ts): a signature of the active key verifies with
 * WebCrypto against the JWKS entry of its `keyid`; published JWKs carry `kid`, `alg` (EdDSA or
 * ES256), `use: 'sig'`, `key_ops: ['verify']` and no private member; after a rotation the
 * previous key stays published; a revoked key is never published nor active.
 */
export interface SignerPort {
  active(): SigningKey;
  /** Public keys to publish (`/.well-known/jwks.json`), revoked ones excluded. */
  jwks(): { keys: PublicJwk[] };
  /** Revoked key ids with the time the list was last updated. */
  revocations(): { keyids: string[]; updatedAt: Date };
}

export const Signer = token<SignerPort>('core.signer');

/**
 * Response-signing keys (`{ns}_use: "response-signing"`), distinct from the webhook keys: they sign
 * designated task answers (the payload-envelope JWS of verify_brand_claim). A feature that signs
 * calls `enable()` in its init; the deployment then keeps an active key (generated at first start,
 * rotated like the webhook keys) and publishes it beside them in `/.well-known/jwks.json`.
 * Deployments where no feature enables it publish no response-signing key.
 */
export interface ResponseSignerPort {
  enable(): void;
  /** The active key; throws before start or when not enabled. */
  active(): SigningKey;
  /** Published response-signing keys (revoked ones excluded). */
  jwks(): { keys: PublicJwk[] };
}

export const ResponseSigner = token<ResponseSignerPort>('core.response-signer');
