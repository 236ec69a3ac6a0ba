import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import testAgent, { TEST_TOKEN, TENANTS } from '../../config/test-agent.ts';
import signalsAgent from '../../config/signals-agent.ts';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import requestSigning from '../../plugins/request-signing/index.ts';
import { signRequest } from '../../lib/rfc9421/sign.ts';
import { generatePrivateJwk, signingKeyFrom } from '../../lib/signer/keys.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { bothVersionsErrors } from '../support/schemas.ts';

// Request signing as the agent presets deploy it: the test agent verifies on every tenant and is a
// registered counterparty of the AdCP conformance runner (its pinned test keys, the revoked key,
// the per-keyid cap, the verify-only grading endpoint under each tenant path); the other presets
// verify under the published policy and trust none of the test keys.
const keys: any[] = JSON.parse(readFileSync(join(import.meta.dir, '../fixtures/request-signing-keys.json'), 'utf8')).keys;
const keyOf = (kid: string) => {
  const k = keys.find((x) => x.kid === kid);
  const jwk = { kty: k.kty, crv: k.crv, x: k.x, ...(k.y ? { y: k.y } : {}), d: k._private_d_for_test_only };
  return signingKeyFrom(jwk, kid, k.crv === 'Ed25519' ? 'ed25519' : 'ecdsa-p256-sha256', 'adcp');
};
const publicOf = (kid: string) => {
  const { _private_d_for_test_only: _d, $comment: _c, ...pub } = keys.find((x) => x.kid === kid);
  return pub;
};

type Signing = { kid: string; coverDigest?: boolean } | { key: Awaited<ReturnType<typeof keyOf>> };
/** POST a JSON body, signed (RFC 9421, namespace adcp) for the URL it is sent to, or unsigned. */
async function post(s: TestServer, path: string, body: unknown, signing?: Signing, extra: Record<string, string> = {}) {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const url = s.base + path;
  const key = signing && ('key' in signing ? signing.key : await keyOf(signing.kid));
  const coverDigest = signing && 'kid' in signing ? signing.coverDigest : undefined;
  const headers = key ? await signRequest({ key, namespace: 'adcp', url, body: bytes, coverDigest, now: new Date() }) : { 'content-type': 'application/json' };
  return { headers, res: await fetch(url, { method: 'POST', body: bytes, headers: { ...headers, ...extra } }) };
}
const challenge = (res: Response) => [res.status, res.headers.get('www-authenticate')];
const refused = (code: string) => [401, `Signature error="${code}"`];
const BUY = { plan_id: 'plan_001', packages: [{ package_id: 'pkg_1', budget: { amount: 1000, currency: 'USD' } }] };

forEachDatabase<TestServer>(
  'test agent request signing',
  (adapter, schema) => startServer(adapter, schema, testAgent.plugins.slice(1), { env: { PROTOCOL_NAMESPACE: 'adcp' } }),
  (s) => s.close(),
  (get) => {
    test('every tenant publishes request_signing (supported, required for nothing), valid in both versions, without the deprecated specialism', async () => {
      for (const { id } of TENANTS) {
        const res = await get().fetch(`/${id}/tasks/get_adcp_capabilities`, { method: 'POST', token: TEST_TOKEN, json: {} });
        const body = (await res.json()) as any;
        expect({ id, signing: body.request_signing }).toEqual({
          id,
          signing: { supported: true, covers_content_digest: 'either', required_for: [], supported_for: expect.arrayContaining(['get_adcp_capabilities']) },
        });
        expect({ id, specialisms: (body.specialisms ?? []).includes('signed-requests') }).toEqual({ id, specialisms: false });
        expect(bothVersionsErrors('protocol/get-adcp-capabilities-response.json', body)).toEqual([]);
      }
    });

    test('the grading endpoint under each tenant path verifies a runner-signed call without executing it; the same bytes again are a replay', async () => {
      for (const { id } of TENANTS) {
        for (const host of ['mcp', 'a2a']) {
          const { headers, res } = await post(get(), `/${id}/${host}/adcp/create_media_buy`, BUY, { kid: 'test-ed25519-2026' });
          expect({ id, host, status: res.status, body: await res.json() }).toEqual({
            id,
            host,
            status: 200,
            body: { operation: 'create_media_buy', signed: true, keyid: 'test-ed25519-2026' },
          });
          const again = await fetch(`${get().base}/${id}/${host}/adcp/create_media_buy`, { method: 'POST', body: JSON.stringify(BUY), headers });
          expect({ id, host, answer: challenge(again) }).toEqual({ id, host, answer: refused('request_signature_replayed') });
        }
      }
      const es256 = await post(get(), '/sales/mcp/adcp/create_media_buy', BUY, { kid: 'test-es256-2026', coverDigest: true });
      expect(es256.res.status).toBe(200);
    });

    test('the grading endpoint refuses with the code of each failure, and requires signed create_media_buy as the vectors do', async () => {
      const s = get();
      const path = '/signals/mcp/adcp/create_media_buy';
      expect(challenge((await post(s, path, BUY)).res)).toEqual(refused('request_signature_required'));
      // Another operation may come unsigned, unless it registers webhook credentials.
      const unsigned = (await post(s, '/signals/mcp/adcp/get_products', { brief: 'x' })).res;
      expect([unsigned.status, await unsigned.json()]).toEqual([200, { operation: 'get_products', signed: false }]);
      const push = {
        media_buy_id: 'mb_001',
        push_notification_config: { url: 'https://buyer.example/h', authentication: { scheme: 'HMAC-SHA256', credentials: 'x' } },
      };
      const withCredentials = await post(s, '/signals/mcp/adcp/update_media_buy', push, undefined, { authorization: 'Bearer test-bearer-token' });
      expect(challenge(withCredentials.res)).toEqual(refused('request_signature_required'));
      expect(challenge((await post(s, path, BUY, { kid: 'test-revoked-2026' })).res)).toEqual(refused('request_signature_key_revoked'));
      expect(challenge((await post(s, path, BUY, { kid: 'test-gov-2026' })).res)).toEqual(refused('request_signature_key_purpose_invalid'));
      const stranger = await signingKeyFrom(await generatePrivateJwk('ed25519'), 'someone-else-2026', 'ed25519', 'adcp');
      expect(challenge((await post(s, path, BUY, { key: stranger })).res)).toEqual(refused('request_signature_key_unknown'));
      // The digest covers the body: other bytes under the same signature do not verify.
      const fresh = await signRequest({
        key: await keyOf('test-ed25519-2026'),
        namespace: 'adcp',
        url: s.base + path,
        body: new TextEncoder().encode(JSON.stringify(BUY)),
        now: new Date(),
      });
      const other = await fetch(s.base + path, { method: 'POST', body: JSON.stringify({ ...BUY, plan_id: 'plan_002' }), headers: fresh });
      expect(challenge(other)).toEqual(refused('request_signature_digest_mismatch'));
      const wrongMethod = await s.fetch(path);
      expect([wrongMethod.status, wrongMethod.headers.get('allow')]).toEqual([405, 'POST']);
    });

    test('the runner’s keys are capped at the test kit’s 100 live nonces each', async () => {
      const db = get().deployment.get(Database);
      await db.query(sql`DELETE FROM request_signature_nonces`);
      await db.query(sql`INSERT INTO request_signature_nonces (keyid, nonce, expires_at)
        SELECT 'test-ed25519-2026', 'fill-' || i, now() + interval '5 minutes' FROM generate_series(1, 99) AS i`);
      const path = '/governance/mcp/adcp/create_media_buy';
      expect((await post(get(), path, BUY, { kid: 'test-ed25519-2026' })).res.status).toBe(200);
      expect(challenge((await post(get(), path, BUY, { kid: 'test-ed25519-2026' })).res)).toEqual(refused('request_signature_rate_abuse'));
      // The cap is per key id.
      expect((await post(get(), path, BUY, { kid: 'test-es256-2026' })).res.status).toBe(200);
    });

    test('the task hosts verify too: a runner-signed MCP call is served, its replay refused', async () => {
      const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_adcp_capabilities', arguments: {} } };
      const extra = { accept: 'application/json', authorization: `Bearer ${TEST_TOKEN}` };
      const { headers, res } = await post(get(), '/brand/mcp', rpc, { kid: 'test-es256-2026' }, extra);
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).result.structuredContent.request_signing.supported).toBe(true);
      const again = await fetch(`${get().base}/brand/mcp`, { method: 'POST', body: JSON.stringify(rpc), headers: { ...headers, ...extra } });
      expect(challenge(again)).toEqual(refused('request_signature_replayed'));
    });
  },
);

forEachDatabase<TestServer>(
  'signals agent request signing',
  (adapter, schema) =>
    startServer(adapter, schema, signalsAgent.plugins.slice(1), { env: { PROTOCOL_NAMESPACE: 'adcp', REQUEST_SIGNING_REQUIRED_FOR: 'activate_signal' } }),
  (s) => s.close(),
  (get) => {
    test('publishes the policy of its environment and enforces it; trusts none of the conformance keys; has no grading endpoint', async () => {
      const s = get();
      const caps = (await (await s.fetch('/tasks/get_adcp_capabilities', { method: 'POST', json: {} })).json()) as any;
      expect(caps.request_signing).toMatchObject({ supported: true, covers_content_digest: 'either', required_for: ['activate_signal'] });
      const activate = { signal_agent_segment_id: 'x', destinations: [{ type: 'platform', platform: 'p' }], idempotency_key: 'presets-unsigned-0001' };
      expect(challenge((await post(s, '/tasks/activate_signal', activate)).res)).toEqual(refused('request_signature_required'));
      const signed = await post(s, '/tasks/get_adcp_capabilities', {}, { kid: 'test-ed25519-2026' });
      expect(challenge(signed.res)).toEqual(refused('request_signature_key_unknown'));
      expect((await post(s, '/mcp/adcp/create_media_buy', BUY, { kid: 'test-ed25519-2026' })).res.status).toBe(404);
    });
  },
);

forEachDatabase<TestServer>(
  'pinned request signers',
  (adapter, schema) =>
    startServer(
      adapter,
      schema,
      [
        requestSigning({
          signers: [
            { id: 'capped', jwks: { keys: [publicOf('test-ed25519-2026')] }, perKeyidCap: 1 },
            { id: 'default', jwks: { keys: [publicOf('test-es256-2026')] } },
          ],
          perKeyidCap: 2,
          probe: { mounts: ['/x'] },
        }),
      ],
      { env: { PROTOCOL_NAMESPACE: 'adcp' } },
    ),
  (s) => s.close(),
  (get) => {
    test('a signer’s own per-keyid cap applies to its keys, the plugin’s to the others', async () => {
      const send = (kid: string) => post(get(), '/x/adcp/op', {}, { kid }).then(({ res }) => res.status);
      expect([await send('test-ed25519-2026'), await send('test-ed25519-2026')]).toEqual([200, 401]);
      expect([await send('test-es256-2026'), await send('test-es256-2026'), await send('test-es256-2026')]).toEqual([200, 200, 401]);
    });
  },
);

describe('request-signing options', () => {
  test('a pinned key with a private member, or a signer both pinned and fetched, is refused at assembly', async () => {
    const withPrivate = { ...publicOf('test-ed25519-2026'), d: 'x' };
    await expect(startServer('pglite', 'sig_opts_private', [requestSigning({ signers: [{ id: 'a', jwks: { keys: [withPrivate] } }] })])).rejects.toThrow(
      /must be a public key/,
    );
    const both = { id: 'a', jwksUri: 'https://a.example/jwks.json', jwks: { keys: [publicOf('test-ed25519-2026')] } };
    await expect(startServer('pglite', 'sig_opts_both', [requestSigning({ signers: [both] })])).rejects.toThrow(/give brandJsonUrl or jwksUri, or jwks/);
  });
});
