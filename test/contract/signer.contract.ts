import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { PublicJwk, SignatureAlg, SignerPort } from '../../core/ports/signer.ts';

export interface SignerSubject {
  port: SignerPort;
  /** Rotate: a new key becomes active (as an operator would); the port reflects it when this resolves. */
  rotate(): Promise<void>;
  /** Revoke a key id; the port reflects it when this resolves. */
  revoke(keyid: string): Promise<void>;
  close(): Promise<void>;
}

/** WebCrypto parameters of each protocol algorithm: verification here never uses the implementation's code. */
const WEBCRYPTO: Record<SignatureAlg, { key: EcKeyImportParams | Algorithm; verify: EcdsaParams | Algorithm; jose: string }> = {
  ed25519: { key: { name: 'Ed25519' }, verify: { name: 'Ed25519' }, jose: 'EdDSA' },
  'ecdsa-p256-sha256': { key: { name: 'ECDSA', namedCurve: 'P-256' }, verify: { name: 'ECDSA', hash: 'SHA-256' }, jose: 'ES256' },
};
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];
const enc = new TextEncoder();

async function verifies(jwk: PublicJwk, alg: SignatureAlg, signature: Uint8Array, data: Uint8Array): Promise<boolean> {
  const key = await crypto.subtle.importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x, ...(jwk.y ? { y: jwk.y } : {}) }, WEBCRYPTO[alg].key, false, [
    'verify',
  ]);
  return crypto.subtle.verify(WEBCRYPTO[alg].verify, key, signature as Uint8Array<ArrayBuffer>, data as Uint8Array<ArrayBuffer>);
}

/** The signer port contract (core/ports/signer.ts), run once per algorithm adapter. */
export function signerContract(name: string, alg: SignatureAlg, make: () => Promise<SignerSubject>): void {
  describe(`signer contract: ${name}`, () => {
    let subject: SignerSubject;
    beforeAll(async () => {
      subject = await make();
    });
    afterAll(async () => {
      await subject?.close();
    });
    const signer = () => subject.port;
    const published = () => signer().jwks().keys;

    /** Sign with the active key and check the signature against the JWKS entry of its key id. */
    const roundTrip = async () => {
      const key = signer().active();
      const data = enc.encode(`signature base ${key.keyid}`);
      const signature = await key.sign(data);
      expect(signature).toBeInstanceOf(Uint8Array);
      expect(signature.length).toBe(64); // Ed25519, and P-256 as raw r||s
      const jwk = published().find((k) => k.kid === key.keyid);
      expect(jwk).toBeDefined();
      expect(await verifies(jwk!, alg, signature, data)).toBe(true);
      expect(await verifies(jwk!, alg, signature, enc.encode('other data'))).toBe(false);
      return key.keyid;
    };

    test(`the active key is ${alg}; it signs, and its published JWK verifies the signature with WebCrypto`, async () => {
      expect(signer().active().alg).toBe(alg);
      await roundTrip();
    });

    test('published JWKs carry their key id, algorithm and purpose, and no private member', () => {
      const active = signer().active();
      expect(active.publicJwk.kid).toBe(active.keyid);
      expect(published().length).toBeGreaterThan(0);
      for (const jwk of [active.publicJwk, ...published()]) {
        expect(jwk).toMatchObject({ alg: WEBCRYPTO[alg].jose, use: 'sig', key_ops: ['verify'] });
        for (const member of PRIVATE_MEMBERS) expect(jwk).not.toHaveProperty(member);
      }
      expect(new Set(published().map((k) => k.kid)).size).toBe(published().length);
    });

    test('rotation: a new active key signs; the previous one stays published for in-flight signatures', async () => {
      const before = signer().active().keyid;
      await subject.rotate();
      const after = await roundTrip();
      expect(after).not.toBe(before);
      expect(published().map((k) => k.kid)).toEqual(expect.arrayContaining([before, after]));
    });

    test('revocation: the key leaves the JWKS and is listed in revocations(), with the time the list changed', async () => {
      const keyids = published().map((k) => k.kid);
      const victim = keyids.find((k) => k !== signer().active().keyid)!;
      expect(victim).toBeDefined();
      expect(signer().revocations().keyids).not.toContain(victim);
      const startedAt = Date.now();
      await subject.revoke(victim);
      expect(published().map((k) => k.kid)).not.toContain(victim);
      const { keyids: revoked, updatedAt } = signer().revocations();
      expect(revoked).toContain(victim);
      expect(updatedAt).toBeInstanceOf(Date);
      expect(updatedAt.getTime()).toBeGreaterThanOrEqual(startedAt - 1000);
      await roundTrip();
    });

    test('revoking the active key leaves a different, unrevoked active key that still signs', async () => {
      const active = signer().active().keyid;
      await subject.revoke(active);
      const next = await roundTrip();
      expect(next).not.toBe(active);
      expect(signer().revocations().keyids).toContain(active);
      expect(signer().revocations().keyids).not.toContain(next);
      expect(published().map((k) => k.kid)).not.toContain(active);
    });
  });
}
