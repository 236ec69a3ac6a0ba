import type { PublicJwk } from '../../core/ports/signer.ts';
import type { KeyResolver } from '../../lib/rfc9421/verify.ts';
import type { SignerJwk } from '../../lib/rfc9421/jwks-resolver.ts';

export type SignerKeys = KeyResolver & { senderOf(keyid: string): Promise<string | null> };

/**
 * Trusted signers' keys: those pinned in configuration (an inline JWKS, never fetched) first, then
 * the ones behind the other signers' brand.json -> jwks_uri (`fetched`, when the deployment can fetch).
 */
export function signerKeys(pinned: readonly { id: string; keys: readonly PublicJwk[] }[], fetched: SignerKeys | null): SignerKeys {
  const byKid = new Map<string, SignerJwk>();
  for (const s of pinned) for (const k of s.keys) if (!byKid.has(k.kid)) byKid.set(k.kid, { ...k, sender: s.id });
  const resolve = async (keyid: string): Promise<SignerJwk | null> => byKid.get(keyid) ?? ((await fetched?.resolve(keyid)) as SignerJwk | null) ?? null;
  return { resolve, senderOf: async (keyid) => (await resolve(keyid))?.sender ?? null };
}
