import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from '../../core/sql.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import type { PublicJwk } from '../../core/ports/signer.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { createRequestVerifier } from '../../lib/rfc9421/request.ts';
import { parseSignatureHeaders } from '../../lib/rfc9421/fields.ts';
import { signatureBase } from '../../lib/rfc9421/base.ts';
import { signRequest } from '../../lib/rfc9421/sign.ts';
import { signingKeyFrom } from '../../lib/signer/keys.ts';
import { replayStore, revocations } from '../../plugins/request-signing/stores.ts';
import { forEachDatabase, openDatabase } from '../support/db.ts';
import { REFERENCE } from '../support/reference.ts';

// The AdCP request-signing conformance vectors (positive, negative with their error codes,
// canonicalization), namespace adcp, against the library verifier with the request-signing
// plugin's own replay cache and revocation table in the database.
const dir = join(REFERENCE, 'test-vectors/request-signing');
const read = (path: string) => JSON.parse(readFileSync(join(dir, path), 'utf8'));
const rawKeys: any[] = read('keys.json').keys;
const keys: PublicJwk[] = rawKeys.map(({ _private_d_for_test_only: _d, $comment: _c, ...pub }) => pub);
const load = (sub: string) =>
  readdirSync(join(dir, sub))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ file: `${sub}/${f}`, vec: read(`${sub}/${f}`) }));
const positive = load('positive');
const negative = load('negative');
const migrations = loadMigrations(join(import.meta.dir, '../../plugins/request-signing/migrations'));
const CAP = 32;

/** The operation a vector's request addresses: the last path segment (`/adcp/create_media_buy`). */
const operationOf = (url: string) => new URL(url.replace(/^https:\/\/[^/]*/, 'https://x')).pathname.split('/').filter(Boolean).pop() ?? '';

function webhookCredentials(body: string): boolean {
  try {
    return JSON.parse(body)?.push_notification_config?.authentication !== undefined;
  } catch {
    return false;
  }
}

test('every vector file is exercised (12 positive, 27 negative)', () => {
  expect([positive.length, negative.length]).toEqual([12, 27]);
});

describe('request-signing signature bases equal expected_signature_base', () => {
  for (const { file, vec } of [...positive, ...negative].filter(({ vec }) => vec.expected_signature_base)) {
    test(file, () => {
      const h = vec.request.headers;
      const parsed = parseSignatureHeaders(h['Signature-Input'], h['Signature']);
      expect(signatureBase(parsed.components, parsed.paramsValue, { method: vec.request.method, url: vec.request.url, headers: new Headers(h) })).toBe(
        vec.expected_signature_base,
      );
    });
  }
});

test('our signer reproduces the Ed25519 positive vectors byte for byte', async () => {
  const priv = rawKeys.find((k) => k.kid === 'test-ed25519-2026');
  const key = await signingKeyFrom({ kty: priv.kty, crv: priv.crv, x: priv.x, d: priv._private_d_for_test_only }, priv.kid, 'ed25519', 'adcp');
  for (const file of ['001-basic-post.json', '002-post-with-content-digest.json']) {
    const vec = read(`positive/${file}`);
    const params = parseSignatureHeaders(vec.request.headers['Signature-Input'], vec.request.headers.Signature).params;
    const headers = await signRequest({
      key,
      namespace: 'adcp',
      url: vec.request.url,
      body: new TextEncoder().encode(vec.request.body),
      now: new Date(params.created! * 1000),
      nonce: params.nonce,
      coverDigest: 'Content-Digest' in vec.request.headers,
    });
    const { Signature, 'Signature-Input': input, 'Content-Digest': digest } = vec.request.headers;
    expect([headers.signature, headers['signature-input'], headers['content-digest']]).toEqual([Signature, input, digest]);
  }
});

forEachDatabase(
  'request-signing vectors',
  async (adapter, schema) => {
    const db = await openDatabase(adapter, schema);
    await db.migrate('request-signing', migrations);
    return db;
  },
  (db) => db.close(),
  (get) => {
    const verifierFor = async (vec: any, capability = vec.verifier_capability) => {
      const db: DatabasePort = get();
      await db.query(sql`DELETE FROM request_signature_nonces`);
      await db.query(sql`DELETE FROM request_signature_revocations`);
      const clock = new ManualClock(new Date(vec.reference_now * 1000));
      const jwks = new Map<string, PublicJwk>();
      for (const kid of vec.jwks_ref ?? []) jwks.set(kid, keys.find((k) => k.kid === kid)!);
      for (const k of vec.jwks_override?.keys ?? []) {
        const { $comment: _c, ...jwk } = k;
        jwks.set(jwk.kid, jwk);
      }
      const replay = replayStore(db);
      const revoked = revocations(db);
      const state = vec.test_harness_state ?? {};
      const future = new Date((vec.reference_now + 3600) * 1000);
      for (const e of state.replay_cache_entries ?? []) await replay.record(e.keyid, e.nonce, future, clock.now());
      if (state.replay_cache_per_keyid_cap_hit) {
        for (let i = 0; i < CAP; i++) await replay.record(state.replay_cache_per_keyid_cap_hit.keyid, `fill-${i}`, future, clock.now());
      }
      if (state.revocation_list) await revoked.revoke(state.revocation_list.revoked_kids, clock.now());
      return createRequestVerifier({
        namespace: 'adcp',
        keys: { resolve: async (kid) => jwks.get(kid) ?? null },
        replay,
        revocation: revoked,
        clock,
        perKeyidCap: CAP,
        policy: { coversContentDigest: capability.covers_content_digest ?? 'either', requiredFor: capability.required_for ?? [] },
      });
    };
    const requestOf = (vec: any, url = vec.request.url) => ({
      method: vec.request.method,
      url,
      headers: new Headers(vec.request.headers),
      body: new TextEncoder().encode(vec.request.body),
    });
    const contextOf = (vec: any) => ({ operations: [operationOf(vec.request.url)], webhookCredentials: webhookCredentials(vec.request.body) });

    for (const { file, vec } of positive) {
      test(`${file}: verifies, and a second delivery is a replay`, async () => {
        const verify = await verifierFor(vec);
        expect(await verify(requestOf(vec), contextOf(vec))).toMatchObject({ ok: true, signed: true, keyid: vec.jwks_ref[0] });
        expect(await verify(requestOf(vec), contextOf(vec))).toMatchObject({ ok: false, status: 401, code: 'request_signature_replayed' });
      });
    }

    for (const { file, vec } of negative) {
      test(`${file}: ${vec.expected_outcome.error_code}`, async () => {
        const verify = await verifierFor(vec);
        const result = await verify(requestOf(vec), contextOf(vec));
        expect(result).toMatchObject({ ok: false, status: 401, code: vec.expected_outcome.error_code });
        // Nothing enters the replay cache before the signature holds.
        const state = vec.test_harness_state ?? {};
        if (!state.replay_cache_entries && !state.replay_cache_per_keyid_cap_hit) {
          const [row] = await get().query<{ n: number }>(sql`SELECT count(*)::int AS n FROM request_signature_nonces`);
          expect(row!.n).toBe(0);
        }
      });
    }

    test('an unsigned request to an operation outside required_for passes as unsigned', async () => {
      const vec = read('negative/001-no-signature-header.json');
      const verify = await verifierFor(vec, { covers_content_digest: 'either', required_for: ['create_media_buy'] });
      expect(await verify(requestOf(vec), { operations: ['get_signals'], webhookCredentials: false })).toEqual({ ok: true, signed: false });
    });

    describe('canonicalization.json', () => {
      const { cases } = read('canonicalization.json');
      // A signed request (valid up to the crypto step) addressed at each malformed URL.
      const carrier = read('positive/001-basic-post.json');
      for (const c of cases) {
        test(c.name, async () => {
          const { canonicalTarget } = await import('../../lib/rfc9421/target-uri.ts');
          if (!c.reject) {
            expect(canonicalTarget(c.input_url)).toEqual({ targetUri: c.expected_target_uri, authority: c.expected_authority });
            return;
          }
          const verify = await verifierFor(carrier);
          const result = await verify(requestOf(carrier, c.input_url), contextOf(carrier));
          expect(result).toMatchObject({ ok: false, status: 401, code: c.expected_error_code });
        });
      }
    });
  },
);
