import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { generatePrivateJwk, signingKeyFrom } from '../../lib/signer/keys.ts';
import { signWebhook } from '../../lib/rfc9421/sign.ts';
import { createWebhookVerifier, type ReplayStore } from '../../lib/rfc9421/verify.ts';
import { parseStrictJson, StrictJsonError } from '../../lib/strict-json.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import type { SignatureAlg } from '../../core/ports/signer.ts';
import { REFERENCE } from '../support/reference.ts';

const fixture = JSON.parse(readFileSync(join(REFERENCE, 'test-vectors/webhook-hmac-sha256.json'), 'utf8'));
const enc = new TextEncoder();

// Signing and verification of the legacy HMAC are the hmac-signer contract (test/contract/hmac-signer.contract.ts);
// what remains here is the strict JSON parse the vectors require beside the MAC.
describe('legacy HMAC-SHA256 vectors: bodies the MAC accepts but the parser refuses', () => {
  for (const vec of fixture.vectors.filter((v: any) => v.expected_verifier_action === 'reject-malformed')) {
    test(`refuses as malformed: ${vec.id}`, () => {
      expect(() => parseStrictJson(vec.raw_body)).toThrow(StrictJsonError);
    });
  }
  for (const vec of fixture.signer_side.rejection_vectors) {
    test(`duplicate keys refused before signing: ${vec.id}`, () => {
      expect(() => parseStrictJson(vec.signer_input_body)).toThrow(StrictJsonError);
    });
  }
});

function memoryReplay(): ReplayStore {
  const seen = new Map<string, Date>();
  return {
    async count(keyid, now) {
      return [...seen].filter(([k, exp]) => k.startsWith(`${keyid}\n`) && exp > now).length;
    },
    async record(keyid, nonce, expiresAt, now) {
      const k = `${keyid}\n${nonce}`;
      const prior = seen.get(k);
      if (prior && prior > now) return false;
      seen.set(k, expiresAt);
      return true;
    },
  };
}

describe('round trip: our signer -> our verifier', () => {
  for (const alg of ['ed25519', 'ecdsa-p256-sha256'] as SignatureAlg[]) {
    test(`${alg}: verifies, and tampering fails with the right code`, async () => {
      const key = await signingKeyFrom(await generatePrivateJwk(alg), `k-${alg}`, alg, 'adcp');
      const clock = new ManualClock(new Date('2026-05-01T00:00:00Z'));
      const verify = createWebhookVerifier({
        namespace: 'adcp',
        keys: { resolve: async (kid) => (kid === key.keyid ? key.publicJwk : null) },
        replay: memoryReplay(),
        clock,
      });
      const url = 'https://buyer.example.com/hooks/x?op=1';
      const body = enc.encode('{"idempotency_key":"whk_0123456789","task_id":"t1","status":"working"}');
      const sign = () => signWebhook({ key, namespace: 'adcp', url, body, now: clock.now() });
      const send = (headers: Record<string, string>, over: Partial<{ method: string; url: string; body: Uint8Array }> = {}) =>
        verify({ method: over.method ?? 'POST', url: over.url ?? url, headers: new Headers(headers), body: over.body ?? body });

      const headers = await sign();
      expect(headers['Signature-Input']).toContain('tag="adcp/webhook-signing/v1"');
      expect(await send(headers)).toMatchObject({ ok: true, keyid: key.keyid });
      expect(await send(headers)).toMatchObject({ ok: false, code: 'webhook_signature_replayed' });

      expect(await send(await sign(), { body: enc.encode('{"idempotency_key":"whk_0123456789","task_id":"t1","status":"failed"}') })).toMatchObject({
        code: 'webhook_signature_digest_mismatch',
      });
      expect(await send(await sign(), { method: 'PUT' })).toMatchObject({ code: 'webhook_signature_invalid' });
      expect(await send(await sign(), { url: 'https://buyer.example.com/hooks/y?op=1' })).toMatchObject({ code: 'webhook_signature_invalid' });
      expect(await send(await sign(), { url: 'https://evil.example.com/hooks/x?op=1' })).toMatchObject({ code: 'webhook_signature_invalid' });
      const h2 = await sign();
      expect(await send({ ...h2, 'Content-Digest': `sha-256=:${Buffer.alloc(32).toString('base64url')}:` })).toMatchObject({
        code: 'webhook_signature_invalid',
      });
      expect(await send({ ...(await sign()), 'Content-Type': 'text/plain' })).toMatchObject({ ok: false, status: 415 });
      expect(await send(await sign(), { body: new Uint8Array(1024 * 1024 + 1) })).toMatchObject({ ok: false, status: 413 });
      expect(await send(await sign(), { url: 'https://fe80::1/hooks' })).toMatchObject({ code: 'webhook_target_uri_malformed' });
      const dup = enc.encode('{"a":1,"a":2}');
      expect(await send(await signWebhook({ key, namespace: 'adcp', url, body: dup, now: clock.now() }), { body: dup })).toMatchObject({
        code: 'webhook_body_malformed',
      });

      // Outside the window once time moves past expires + skew.
      const late = await sign();
      clock.advance(361_000);
      expect(await send(late)).toMatchObject({ code: 'webhook_signature_window_invalid' });
    });
  }
});
