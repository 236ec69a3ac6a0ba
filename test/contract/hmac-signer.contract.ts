import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHmac } from 'node:crypto';
import type { HmacSignerPort } from '../../core/ports/hmac-signer.ts';
import { REFERENCE } from '../support/reference.ts';

export interface HmacSignerSubject {
  port: HmacSignerPort;
  /** The deployment's protocol namespace (header names derive from it). */
  namespace: string;
  close(): Promise<void>;
}

interface Fixture {
  secret: string;
  vectors: Array<{ id: string; timestamp: number; raw_body: string; expected_signature: string }>;
  rejection_vectors: Array<{ id: string; timestamp: number | string; raw_body: string; signature: string | null; current_time?: number }>;
  secret_rejection_vectors: Array<{ description: string; secret: string }>;
}

const fixture: Fixture = JSON.parse(readFileSync(join(REFERENCE, 'test-vectors/webhook-hmac-sha256.json'), 'utf8'));
const enc = new TextEncoder();
const TS = 1_700_000_000;
const OTHER_SECRET = 'Zk3q9VYt1mXw8s2LpR7uJc4aN6bQe0Hd';

/** The legacy HMAC-SHA256 webhook signer contract (core/ports/hmac-signer.ts), with the reference vectors. */
export function hmacSignerContract(name: string, make: () => Promise<HmacSignerSubject>): void {
  describe(`hmac-signer contract: ${name}`, () => {
    let subject: HmacSignerSubject;
    beforeAll(async () => {
      subject = await make();
    });
    afterAll(async () => {
      await subject?.close();
    });
    const hmac = () => subject.port;
    const sigHeader = () => `X-${subject.namespace.toUpperCase()}-Signature`;
    const tsHeader = () => `X-${subject.namespace.toUpperCase()}-Timestamp`;
    const headers = (signature: string | null, ts: unknown) => {
      const h = new Headers();
      if (signature !== null) h.set(sigHeader(), signature);
      h.set(tsHeader(), String(ts));
      return h;
    };

    test('sign answers exactly the two namespaced headers: sha256=hex(HMAC(secret, "{ts}.{body}")) and the timestamp', () => {
      const body = enc.encode('{"a":1}');
      const expected = createHmac('sha256', enc.encode(fixture.secret)).update(`${TS}.{"a":1}`).digest('hex');
      expect(hmac().sign(fixture.secret, body, TS)).toEqual({ [sigHeader()]: `sha256=${expected}`, [tsHeader()]: String(TS) });
    });

    for (const vec of fixture.vectors) {
      test(`reference vector ${vec.id}: signs to the expected value and verifies`, () => {
        const body = enc.encode(vec.raw_body);
        const signed = hmac().sign(fixture.secret, body, vec.timestamp);
        expect(signed[sigHeader()]).toBe(vec.expected_signature);
        expect(hmac().verify([fixture.secret], body, headers(vec.expected_signature, vec.timestamp), vec.timestamp)).toEqual({ ok: true });
      });
    }

    for (const vec of fixture.rejection_vectors) {
      test(`reference rejection ${vec.id} is refused`, () => {
        const result = hmac().verify([fixture.secret], enc.encode(vec.raw_body), headers(vec.signature, vec.timestamp), vec.current_time ?? TS);
        expect(result.ok).toBe(false);
      });
    }

    test('each refusal names its reason', () => {
      const body = enc.encode('{"event":"test"}');
      const good = hmac().sign(fixture.secret, body, TS)[sigHeader()]!;
      const verify = (h: Headers, now = TS) => hmac().verify([fixture.secret], body, h, now);
      expect(verify(new Headers())).toEqual({ ok: false, code: 'webhook_hmac_missing' });
      expect(verify(headers(null, TS))).toEqual({ ok: false, code: 'webhook_hmac_missing' });
      expect(verify(headers('sha256=c4faf8', TS))).toEqual({ ok: false, code: 'webhook_hmac_malformed' });
      expect(verify(headers(`sha512=${good.slice(7)}`, TS))).toEqual({ ok: false, code: 'webhook_hmac_malformed' });
      expect(verify(headers(good, 'not-a-number'))).toEqual({ ok: false, code: 'webhook_hmac_timestamp_invalid' });
      expect(hmac().verify([fixture.secret], enc.encode('{"event":"hacked"}'), headers(good, TS), TS)).toEqual({ ok: false, code: 'webhook_hmac_invalid' });
    });

    test('a timestamp up to 300 s away either way verifies; 301 s does not', () => {
      const body = enc.encode('{}');
      const h = new Headers(hmac().sign(fixture.secret, body, TS));
      for (const now of [TS - 300, TS, TS + 300]) expect(hmac().verify([fixture.secret], body, h, now)).toEqual({ ok: true });
      for (const now of [TS - 301, TS + 301])
        expect(hmac().verify([fixture.secret], body, h, now)).toEqual({ ok: false, code: 'webhook_hmac_timestamp_invalid' });
    });

    test('during rotation the current and the previous secret both verify, in any order; a retired one does not', () => {
      const body = enc.encode('{"a":1}');
      const byPrevious = new Headers(hmac().sign(fixture.secret, body, TS));
      const byCurrent = new Headers(hmac().sign(OTHER_SECRET, body, TS));
      expect(hmac().verify([OTHER_SECRET, fixture.secret], body, byPrevious, TS)).toEqual({ ok: true });
      expect(hmac().verify([fixture.secret, OTHER_SECRET], body, byPrevious, TS)).toEqual({ ok: true });
      expect(hmac().verify([OTHER_SECRET, fixture.secret], body, byCurrent, TS)).toEqual({ ok: true });
      expect(hmac().verify([OTHER_SECRET], body, byPrevious, TS)).toEqual({ ok: false, code: 'webhook_hmac_invalid' });
      expect(hmac().verify([], body, byPrevious, TS)).toEqual({ ok: false, code: 'webhook_hmac_invalid' });
    });

    for (const vec of fixture.secret_rejection_vectors) {
      test(`checkSecret refuses ${vec.description}, and sign refuses to use it`, () => {
        expect(hmac().checkSecret(vec.secret)).toBeString();
        expect(() => hmac().sign(vec.secret, enc.encode('{}'), TS)).toThrow();
      });
    }

    test('checkSecret accepts a long random secret', () => {
      expect(hmac().checkSecret(fixture.secret)).toBeNull();
      expect(hmac().checkSecret(OTHER_SECRET)).toBeNull();
    });
  });
}
