import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { createHmacSigner, hmacHex, checkSecret } from '../../plugins/signer-hmac-legacy/hmac.ts';
import { generatePrivateJwk, signingKeyFrom } from '../../plugins/signer-common/keys.ts';
import { signWebhook } from '../../plugins/webhooks/rfc9421/sign.ts';
import { createWebhookVerifier, type ReplayStore } from '../../plugins/webhooks/rfc9421/verify.ts';
import { parseStrictJson, StrictJsonError } from '../../plugins/webhooks/strict-json.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import type { SignatureAlg } from '../../core/ports/signer.ts';

const fixture = JSON.parse(readFileSync(join(import.meta.dir, '../../../shared/reference/test-vectors/webhook-hmac-sha256.json'), 'utf8'));
const enc = new TextEncoder();
const hmac = createHmacSigner('adcp');

function headersFor(signature: string | null, ts: unknown) {
  const h = new Headers();
  if (signature !== null) h.set('X-ADCP-Signature', signature);
  h.set('X-ADCP-Timestamp', String(ts));
  return h;
}

describe('legacy HMAC-SHA256 (webhook-hmac-sha256.json)', () => {
  for (const vec of fixture.vectors) {
    test(`signs ${vec.id}`, () => {
      expect(`sha256=${hmacHex(fixture.secret, vec.timestamp, enc.encode(vec.raw_body))}`).toBe(vec.expected_signature);
      const result = hmac.verify([fixture.secret], enc.encode(vec.raw_body), headersFor(vec.expected_signature, vec.timestamp), vec.timestamp);
      expect(result).toEqual({ ok: true });
      if (vec.expected_verifier_action === 'reject-malformed') {
        // The MAC holds; the body is refused as malformed, not as a signature mismatch.
        expect(() => parseStrictJson(vec.raw_body)).toThrow(StrictJsonError);
      }
    });
  }
  for (const vec of fixture.rejection_vectors) {
    test(`rejects ${vec.id}`, () => {
      const now = vec.current_time ?? 1700000000;
      const result = hmac.verify([fixture.secret], enc.encode(vec.raw_body), headersFor(vec.signature, vec.timestamp), now);
      expect(result.ok).toBe(false);
    });
  }
  for (const vec of fixture.secret_rejection_vectors) {
    test(`refuses secret: ${vec.description}`, () => {
      expect(checkSecret(vec.secret)).not.toBeNull();
      expect(() => hmac.sign(vec.secret, enc.encode('{}'), 1)).toThrow();
    });
  }
  for (const vec of fixture.signer_side.rejection_vectors) {
    test(`duplicate keys refused before signing: ${vec.id}`, () => {
      expect(() => parseStrictJson(vec.signer_input_body)).toThrow(StrictJsonError);
    });
  }
  test('accepts the previous secret during rotation, in constant time over both', () => {
    const previous = fixture.secret;
    const current = 'Zk3q9VYt1mXw8s2LpR7uJc4aN6bQe0Hd';
    const body = enc.encode('{"a":1}');
    const h = hmac.sign(previous, body, 1700000000);
    expect(hmac.verify([current, previous], body, new Headers(h), 1700000100)).toEqual({ ok: true });
    expect(hmac.verify([current], body, new Headers(h), 1700000100)).toEqual({ ok: false, code: 'webhook_hmac_invalid' });
  });
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
      expect(await send({ ...h2, 'Content-Digest': `sha-256=:${Buffer.alloc(32).toString('base64url')}:` })).toMatchObject({ code: 'webhook_signature_invalid' });
      expect(await send({ ...(await sign()), 'Content-Type': 'text/plain' })).toMatchObject({ ok: false, status: 415 });
      expect(await send(await sign(), { body: new Uint8Array(1024 * 1024 + 1) })).toMatchObject({ ok: false, status: 413 });
      expect(await send(await sign(), { url: 'https://fe80::1/hooks' })).toMatchObject({ code: 'webhook_target_uri_malformed' });
      const dup = enc.encode('{"a":1,"a":2}');
      expect(await send(await signWebhook({ key, namespace: 'adcp', url, body: dup, now: clock.now() }), { body: dup })).toMatchObject({ code: 'webhook_body_malformed' });

      // Outside the window once time moves past expires + skew.
      const late = await sign();
      clock.advance(361_000);
      expect(await send(late)).toMatchObject({ code: 'webhook_signature_window_invalid' });
    });
  }
});
