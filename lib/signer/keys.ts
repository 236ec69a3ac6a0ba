import { importPKCS8, exportJWK } from 'jose';
import type { KeyPurpose, PublicJwk, SignatureAlg, SigningKey } from '../../core/ports/signer.ts';

/** WebCrypto parameters per protocol algorithm name. */
const PARAMS: Record<SignatureAlg, { gen: EcKeyGenParams | Algorithm; sign: Algorithm | EcdsaParams; jose: string }> = {
  ed25519: { gen: { name: 'Ed25519' }, sign: { name: 'Ed25519' }, jose: 'EdDSA' },
  'ecdsa-p256-sha256': { gen: { name: 'ECDSA', namedCurve: 'P-256' }, sign: { name: 'ECDSA', hash: 'SHA-256' }, jose: 'ES256' },
};

export const joseAlg = (alg: SignatureAlg) => PARAMS[alg].jose;

/** Which protocol algorithm a JWK belongs to, or null when it is neither Ed25519 nor P-256. */
export function algOfJwk(jwk: JsonWebKey): SignatureAlg | null {
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'ed25519';
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ecdsa-p256-sha256';
  return null;
}

/** The public half of a private JWK, shaped for a JWKS with the protocol's key-use member (`{ns}_use`: its purpose). */
export function publicJwkOf(privateJwk: JsonWebKey, kid: string, alg: SignatureAlg, namespace: string, purpose: KeyPurpose = 'webhook-signing'): PublicJwk {
  const out: PublicJwk = { kty: privateJwk.kty, crv: privateJwk.crv, x: privateJwk.x, kid, alg: joseAlg(alg), use: 'sig', key_ops: ['verify'] };
  if (privateJwk.y) out.y = privateJwk.y;
  out[`${namespace}_use`] = purpose;
  return out;
}

export async function generatePrivateJwk(alg: SignatureAlg): Promise<JsonWebKey> {
  const pair = (await crypto.subtle.generateKey(PARAMS[alg].gen as any, true, ['sign', 'verify'])) as CryptoKeyPair;
  return crypto.subtle.exportKey('jwk', pair.privateKey);
}

/** A PKCS#8 PEM private key as a JWK (checked against the expected algorithm). */
export async function pemToPrivateJwk(pem: string, alg: SignatureAlg): Promise<JsonWebKey> {
  const key = await importPKCS8(pem, joseAlg(alg), { extractable: true });
  const jwk = (await exportJWK(key)) as JsonWebKey;
  if (algOfJwk(jwk) !== alg) throw new Error(`PEM key is not a ${alg} key`);
  return jwk;
}

/** A signing key over a private JWK; signatures are raw bytes (P-256: r||s as WebCrypto produces). */
export async function signingKeyFrom(
  privateJwk: JsonWebKey,
  kid: string,
  alg: SignatureAlg,
  namespace: string,
  purpose: KeyPurpose = 'webhook-signing',
): Promise<SigningKey> {
  if (algOfJwk(privateJwk) !== alg || !privateJwk.d) throw new Error(`key ${kid}: not a private ${alg} JWK`);
  const { key_ops: _ops, ext: _ext, alg: _alg, use: _use, ...bare } = privateJwk as JsonWebKey & Record<string, unknown>;
  const key = await crypto.subtle.importKey('jwk', bare as JsonWebKey, PARAMS[alg].gen as any, false, ['sign']);
  const params = PARAMS[alg].sign;
  return {
    keyid: kid,
    alg,
    publicJwk: publicJwkOf(privateJwk, kid, alg, namespace, purpose),
    async sign(data) {
      return new Uint8Array(await crypto.subtle.sign(params as any, key, data as Uint8Array<ArrayBuffer>));
    },
  };
}

/** Import a published JWK for verification (the caller has checked purpose and algorithm). */
export async function verifyKeyFrom(jwk: JsonWebKey, alg: SignatureAlg): Promise<CryptoKey> {
  const bare: JsonWebKey = { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
  if (jwk.y) bare.y = jwk.y;
  return crypto.subtle.importKey('jwk', bare, PARAMS[alg].gen as any, false, ['verify']);
}

export async function verifyRaw(key: CryptoKey, alg: SignatureAlg, signature: Uint8Array, data: Uint8Array): Promise<boolean> {
  return crypto.subtle.verify(PARAMS[alg].sign as any, key, signature as Uint8Array<ArrayBuffer>, data as Uint8Array<ArrayBuffer>);
}

/** A key id naming the algorithm and the day it was made (`now`), with random bits. */
export function newKid(alg: SignatureAlg, now: Date): string {
  const day = now.toISOString().slice(0, 10).replaceAll('-', '');
  const rand = Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString('base64url');
  return `${alg === 'ed25519' ? 'ed25519' : 'p256'}-${day}-${rand}`;
}
