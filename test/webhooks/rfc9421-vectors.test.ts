import { describe, expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from '../../core/sql.ts';
import { ManualClock } from '../../core/ports/clock.ts';
import type { PublicJwk } from '../../core/ports/signer.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { createWebhookVerifier } from '../../lib/rfc9421/verify.ts';
import { parseSignatureHeaders } from '../../lib/rfc9421/fields.ts';
import { signatureBase } from '../../lib/rfc9421/base.ts';
import { canonicalTarget, TargetUriError } from '../../lib/rfc9421/target-uri.ts';
import { createReplayStore, createRevocationList } from '../../plugins/webhooks/receiver-stores.ts';
import { forEachDatabase, openDatabase } from '../support/db.ts';
import { REFERENCE } from '../support/reference.ts';

const root = join(REFERENCE, 'test-vectors');
const dir = join(root, 'webhook-signing');
const keys: PublicJwk[] = JSON.parse(await Bun.file(join(dir, 'keys.json')).text()).keys.map((k: any) => {
  const { _private_d_for_test_only: _d, $comment: _c, ...pub } = k;
  return pub;
});
const load = (sub: string) =>
  readdirSync(join(dir, sub))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ file: `${sub}/${f}`, vec: JSON.parse(require('node:fs').readFileSync(join(dir, sub, f), 'utf8')) }));
const vectors = [...load('positive'), ...load('negative')];
const migrations = loadMigrations(join(import.meta.dir, '../../plugins/webhooks/migrations'));
const CAP = 64;

describe('RFC 9421 canonicalization (request-signing/canonicalization.json)', () => {
  const { cases } = JSON.parse(require('node:fs').readFileSync(join(root, 'request-signing/canonicalization.json'), 'utf8'));
  for (const c of cases) {
    test(c.name, () => {
      if (c.reject) {
        expect(() => canonicalTarget(c.input_url)).toThrow(TargetUriError);
      } else {
        expect(canonicalTarget(c.input_url)).toEqual({ targetUri: c.expected_target_uri, authority: c.expected_authority });
      }
    });
  }
});

describe('RFC 9421 signature base equals expected_signature_base', () => {
  for (const { file, vec } of vectors) {
    const h = vec.request.headers;
    // Unparseable headers have no base; 012/014 list the base signed before a parameter was removed.
    const code = vec.expected_outcome.error_code;
    if (!h['Signature-Input'] || !h['Signature'] || code === 'webhook_signature_header_malformed' || code === 'webhook_signature_params_incomplete') continue;
    test(file, () => {
      const parsed = parseSignatureHeaders(h['Signature-Input'], h['Signature']);
      const base = signatureBase(parsed.components, parsed.paramsValue, { method: vec.request.method, url: vec.request.url, headers: new Headers(h) });
      expect(base).toBe(vec.expected_signature_base);
    });
  }
});

forEachDatabase(
  'webhook-signing vectors',
  async (adapter, schema) => {
    const db = await openDatabase(adapter, schema);
    await db.migrate('webhooks', migrations);
    return db;
  },
  (db) => db.close(),
  (get) => {
    for (const { file, vec } of vectors) {
      test(`${file}: ${vec.expected_outcome.success ? 'verifies' : vec.expected_outcome.error_code}`, async () => {
        const db: DatabasePort = get();
        await db.query(sql`DELETE FROM webhook_replay_nonces`);
        await db.query(sql`DELETE FROM webhook_key_revocations`);
        await db.query(sql`DELETE FROM webhook_revocation_refresh`);
        const clock = new ManualClock(new Date(vec.reference_now * 1000));
        const jwks = new Map<string, PublicJwk>();
        for (const kid of vec.jwks_ref) jwks.set(kid, keys.find((k) => k.kid === kid)!);
        for (const [kid, jwk] of Object.entries(vec.jwks_override ?? {})) jwks.set(kid, jwk as PublicJwk);

        const replay = createReplayStore(db);
        const revocation = createRevocationList(db, 7200);
        const state = vec.test_harness_state ?? {};
        const future = new Date((vec.reference_now + 3600) * 1000);
        for (const e of state.replay_cache_entries ?? []) await replay.record(e.keyid, e.nonce, future, clock.now());
        for (const kid of state.revoked_kids ?? []) await revocation.revoke(kid, clock.now());
        if (state.revocation_list_stale_seconds) await revocation.replace([], new Date((vec.reference_now - state.revocation_list_stale_seconds) * 1000));
        if (state.per_keyid_cap_filled_for) {
          for (let i = 0; i < CAP; i++) await replay.record(state.per_keyid_cap_filled_for, `fill-${i}`, future, clock.now());
        }

        const verify = createWebhookVerifier({
          namespace: 'adcp',
          keys: { resolve: async (kid) => jwks.get(kid) ?? null },
          replay,
          revocation,
          clock,
          perKeyidCap: CAP,
        });
        const request = {
          method: vec.request.method,
          url: vec.request.url,
          headers: new Headers(vec.request.headers),
          body: new TextEncoder().encode(vec.request.body),
        };
        const result = await verify(request);
        if (vec.expected_outcome.success) {
          expect(result).toMatchObject({ ok: true });
          // Delivered twice: the second is a replay (black-box form of 016).
          const again = await verify(request);
          expect(again).toMatchObject({ ok: false, code: 'webhook_signature_replayed', status: 401 });
        } else {
          expect(result).toMatchObject({ ok: false, status: 401, code: vec.expected_outcome.error_code });
          // A rejected request leaves no nonce behind (steps 1-11 never record).
          if (vec.expected_outcome.failed_step < 12 && !state.replay_cache_entries && !state.per_keyid_cap_filled_for) {
            const [row] = await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM webhook_replay_nonces`);
            expect(row!.n).toBe(0);
          }
        }
      }, 30_000);
    }
  },
);
