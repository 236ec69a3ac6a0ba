import { token } from '../token.ts';

export type SignatureAlg = 'ed25519' | 'ecdsa-p256-sha256';

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
 */
export interface SignerPort {
  active(): SigningKey;
  /** Public keys to publish (`/.well-known/jwks.json`), revoked ones excluded. */
  jwks(): { keys: PublicJwk[] };
  /** Revoked key ids with the time the list was last updated. */
  revocations(): { keyids: string[]; updatedAt: Date };
}

export const Signer = token<SignerPort>('core.signer');

/** Resolves a signer's key id to its public JWK (through the operator's brand.json -> jwks_uri). */
export interface KeyResolverPort {
  resolve(keyid: string): Promise<PublicJwk | null>;
}

export const KeyResolver = token<KeyResolverPort>('core.key-resolver');
