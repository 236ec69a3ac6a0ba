import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HmacFailure, HmacSignerPort } from '../../core/ports/hmac-signer.ts';

export const MAX_SKEW_SECONDS = 300;
export const MIN_SECRET_LENGTH = 32;

const enc = new TextEncoder();

/** hex(HMAC-SHA256(secret bytes, "{ts}.{raw body}")) — the secret is used as text, never hex-decoded. */
export function hmacHex(secret: string, timestamp: string | number, body: Uint8Array): string {
  const mac = createHmac('sha256', enc.encode(secret));
  mac.update(enc.encode(`${timestamp}.`));
  mac.update(body);
  return mac.digest('hex');
}

export function checkSecret(secret: string): string | null {
  if (secret.length < MIN_SECRET_LENGTH) return `must be at least ${MIN_SECRET_LENGTH} characters`;
  if (new Set(secret).size < 8) return 'has too little entropy (repeating or constant characters)';
  return null;
}

export function createHmacSigner(namespace: string): HmacSignerPort {
  const sigHeader = `x-${namespace}-signature`;
  const tsHeader = `x-${namespace}-timestamp`;
  return {
    checkSecret,
    sign(secret, body, ts) {
      const problem = checkSecret(secret);
      if (problem) throw new Error(`HMAC secret ${problem}`);
      return { [`X-${namespace.toUpperCase()}-Signature`]: `sha256=${hmacHex(secret, ts, body)}`, [`X-${namespace.toUpperCase()}-Timestamp`]: String(ts) };
    },
    verify(secrets, body, headers, now): { ok: true } | { ok: false; code: HmacFailure } {
      const sig = headers.get(sigHeader);
      const ts = headers.get(tsHeader);
      if (!sig || ts === null) return { ok: false, code: 'webhook_hmac_missing' };
      // Exact shape before any HMAC work: one prefix, 64 lowercase/uppercase hex digits.
      const m = /^sha256=([0-9a-fA-F]{64})$/.exec(sig);
      if (!m) return { ok: false, code: 'webhook_hmac_malformed' };
      if (!/^\d{1,12}$/.test(ts)) return { ok: false, code: 'webhook_hmac_timestamp_invalid' };
      if (Math.abs(now - Number(ts)) > MAX_SKEW_SECONDS) return { ok: false, code: 'webhook_hmac_timestamp_invalid' };
      const given = Buffer.from(m[1]!.toLowerCase(), 'hex');
      let match = false;
      // Every secret is compared (no early exit), each comparison constant-time.
      for (const secret of secrets) {
        if (!secret) continue;
        const expected = Buffer.from(hmacHex(secret, ts, body), 'hex');
        if (timingSafeEqual(expected, given)) match = true;
      }
      return match ? { ok: true } : { ok: false, code: 'webhook_hmac_invalid' };
    },
  };
}
