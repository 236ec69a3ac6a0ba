import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import { RequestSigner } from '../../core/ports/request-signer.ts';
import crawlerHttp, { HttpCrawler } from '../../plugins/crawler-http/index.ts';
import requestSigning from '../../plugins/request-signing/index.ts';
import requestSigner from '../../plugins/request-signer/index.ts';
import registryProbes from '../../plugins/registry-probes/index.ts';
import restHost from '../../hosts/rest/index.ts';
import { signRequest } from '../../lib/rfc9421/sign.ts';
import { signingKeyFrom } from '../../lib/signer/keys.ts';
import { McpProbe } from '../../lib/agent-clients/mcp.ts';
import { forEachDatabase } from '../support/db.ts';
import { startServer, type TestServer } from '../support/server.ts';
import { startTlsFront } from '../support/tls-front.ts';
import { loopbackResolver, TEST_CERT } from '../support/loopback.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import { startSignalsServer, TOKEN, type SignalsServer } from '../agents/fixture.ts';
import { REFERENCE } from '../support/reference.ts';

// Buyer-signed requests end to end: a buyer deployment signs with the request-signer plugin (its
// key published at /.well-known/request-signing-jwks.json, named by the buyer's brand.json); the
// signals agent verifies through the request-signing plugin (keys fetched via brand.json ->
// jwks_uri through the crawler, replay cache in its own table) and requires signatures for
// activate_signal.
const keys = JSON.parse(readFileSync(join(REFERENCE, 'test-vectors/request-signing/keys.json'), 'utf8')).keys;
const privateJwk = (kid: string) => {
  const k = keys.find((x: any) => x.kid === kid);
  return { kty: k.kty, crv: k.crv, x: k.x, ...(k.y ? { y: k.y } : {}), d: k._private_d_for_test_only };
};
const TTD = { type: 'platform', platform: 'the-trade-desk' };

interface World {
  seller: SignalsServer;
  buyer: TestServer;
  brand: ReturnType<typeof Bun.serve>;
  front: ReturnType<typeof startTlsFront>;
  /** The seller's public MCP URL (behind the TLS front, as a proxy would put it). */
  url: string;
}

forEachDatabase<World>(
  'signed requests',
  async (adapter, schema) => {
    // The buyer's brand.json points at its JWKS: the request-signer plugin's key, and a key it revoked.
    let buyerBase = '';
    const brand: ReturnType<typeof Bun.serve> = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request): Promise<Response> {
        if (new URL(request.url).pathname === '/jwks.json') {
          const live = (await (await fetch(`${buyerBase}/.well-known/request-signing-jwks.json`)).json()) as { keys: unknown[] };
          const { _private_d_for_test_only: _d, $comment: _c, ...revoked } = keys.find((k: any) => k.kid === 'test-revoked-2026');
          return Response.json({ keys: [...live.keys, revoked] });
        }
        const jwks = `http://127.0.0.1:${brand.port}/jwks.json`;
        return Response.json({
          house: { domain: 'buyer.example', agents: [{ type: 'buying', url: 'https://buyer.example/agent', jwks_uri: jwks, adcp_use: 'request-signing' }] },
        });
      },
    });
    // The seller sits behind a TLS front (its public URL), as a reverse proxy would put it.
    const front = startTlsFront();
    const buyer = await startServer(
      adapter,
      `${schema}_b`,
      [
        crawlerHttp({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test']), ca: TEST_CERT }),
        requestSigner({ kid: 'test-ed25519-2026', jwk: privateJwk('test-ed25519-2026') }),
        // The seller's TLS front listens on a test port, which probes reach only when allowed.
        registryProbes({ allowedPorts: [front.port] }),
        restHost(),
      ],
      { env: { PROTOCOL_NAMESPACE: 'adcp' } },
    );
    buyerBase = buyer.base;
    const seller = await startSignalsServer(adapter, `${schema}_s`, {
      env: { PROTOCOL_NAMESPACE: 'adcp', PUBLIC_URL: front.url('seller.pub.test') },
      extra: [
        crawlerHttp({ allowlist: ['127.0.0.1'] }),
        requestSigning({
          requiredFor: ['activate_signal'],
          coversContentDigest: 'required',
          signers: [{ id: 'buyer.example', brandJsonUrl: `http://127.0.0.1:${brand.port}/.well-known/brand.json` }],
          revoked: ['test-revoked-2026'],
          allowHttpKeys: true,
        }),
      ],
    });
    front.route('seller.pub.test', seller.server.base);
    return { seller, buyer, brand, front, url: front.url('seller.pub.test', '/mcp') };
  },
  async ({ seller, buyer, brand, front }) => {
    front.stop();
    brand.stop(true);
    await buyer.close();
    await seller.server.close();
  },
  (get) =>
    describe('activate_signal requires a signature', () => {
      const url = () => get().url;
      const rpc = (args: Record<string, unknown>) =>
        new TextEncoder().encode(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'activate_signal', arguments: args } }));
      // Requests signed for the public URL reach the seller directly, as through a proxy.
      const post = (body: Uint8Array, headers: Record<string, string>) =>
        fetch(`${get().seller.server.base}/mcp`, {
          method: 'POST',
          body: body as Uint8Array<ArrayBuffer>,
          headers: { accept: 'application/json', authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
        });
      const buyerSign = (body: Uint8Array) => get().buyer.deployment.get(RequestSigner).sign({ method: 'POST', url: url(), body });

      test('capabilities declare the policy, valid in both AdCP versions', async () => {
        const res = await get().seller.server.fetch('/tasks/get_adcp_capabilities', { method: 'POST', json: {} });
        const body = (await res.json()) as any;
        expect(body.request_signing).toEqual({
          supported: true,
          covers_content_digest: 'required',
          required_for: ['activate_signal'],
          supported_for: expect.arrayContaining(['activate_signal', 'get_signals', 'get_adcp_capabilities']),
        });
        expect(bothVersionsErrors('protocol/get-adcp-capabilities-response.json', body)).toEqual([]);
      });

      test('unsigned: 401 Signature error="request_signature_required" (MCP and REST)', async () => {
        const args = { signal_agent_segment_id: 'sig_auto_intenders_ev', destinations: [TTD], idempotency_key: 'signed-unsigned-000001' };
        const res = await post(rpc(args), {});
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Signature error="request_signature_required"');
        expect(((await res.json()) as any).error.data.adcp_error).toMatchObject({ code: 'AUTH_REQUIRED', details: { code: 'request_signature_required' } });
        const rest = await get().seller.server.fetch('/tasks/activate_signal', { method: 'POST', token: TOKEN, json: args });
        expect([rest.status, rest.headers.get('www-authenticate')]).toEqual([401, 'Signature error="request_signature_required"']);
      });

      test('signed by the buyer (key from its brand.json): accepted once; the same bytes again are a replay', async () => {
        const body = rpc({ signal_agent_segment_id: 'sig_auto_intenders_ev', destinations: [TTD], idempotency_key: 'signed-ok-000000000001' });
        const headers = await buyerSign(body);
        const res = await post(body, headers);
        expect(res.status).toBe(200);
        expect(((await res.json()) as any).result.structuredContent.status).toBe('submitted');
        const again = await post(body, headers);
        expect([again.status, again.headers.get('www-authenticate')]).toEqual([401, 'Signature error="request_signature_replayed"']);
      });

      test('a tampered body, a revoked key, an unsigned registration carrying credentials: refused', async () => {
        const body = rpc({ signal_agent_segment_id: 'sig_auto_luxury_owners', destinations: [TTD], idempotency_key: 'signed-tamper-0000001' });
        const headers = await buyerSign(body);
        const tampered = rpc({ signal_agent_segment_id: 'sig_auto_lease_expiring', destinations: [TTD], idempotency_key: 'signed-tamper-0000001' });
        expect((await post(tampered, headers)).headers.get('www-authenticate')).toBe('Signature error="request_signature_digest_mismatch"');

        const revoked = await signingKeyFrom(privateJwk('test-revoked-2026'), 'test-revoked-2026', 'ed25519', 'adcp');
        const byRevoked = await signRequest({ key: revoked, namespace: 'adcp', url: url(), body, now: new Date() });
        expect((await post(body, byRevoked)).headers.get('www-authenticate')).toBe('Signature error="request_signature_key_revoked"');

        // get_signals does not require a signature, but webhook credentials in the request do.
        const withCredentials = new TextEncoder().encode(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 2,
            method: 'tools/call',
            params: {
              name: 'get_signals',
              arguments: {
                signal_spec: 'cars',
                push_notification_config: { url: 'https://buyer.example/h', authentication: { schemes: ['HMAC-SHA256'], credentials: 'x'.repeat(32) } },
              },
            },
          }),
        );
        expect((await post(withCredentials, {})).headers.get('www-authenticate')).toBe('Signature error="request_signature_required"');
      });

      test('agent clients sign: the registry probe and the MCP client are verified by the seller', async () => {
        const { seller, buyer } = get();
        const db = seller.server.deployment.get(Database);
        const nonces = async () =>
          (await db.query<{ n: number }>(sql`SELECT count(*)::int AS n FROM request_signature_nonces WHERE keyid = 'test-ed25519-2026'`))[0]!.n;
        const before = await nonces();
        const probe = await buyer.fetch(`/api/public/discover-agent?url=${encodeURIComponent(url())}`);
        expect(probe.status).toBe(200);
        // initialize, its notification and tools/list: each request signed and recorded.
        expect(await nonces()).toBe(before + 3);

        const crawler = new HttpCrawler({ allowlist: ['127.0.0.1'], resolver: loopbackResolver(['pub.test']), ca: TEST_CERT });
        const signer = buyer.deployment.get(RequestSigner);
        const client = new McpProbe(crawler, url(), { timeoutMs: 5000, maxBytes: 1 << 20, sign: (r) => signer.sign(r) });
        await client.initialize();
        expect(((await client.callTool('get_adcp_capabilities', {})) as any).request_signing.supported).toBe(true);
        const revoked = await signingKeyFrom(privateJwk('test-revoked-2026'), 'test-revoked-2026', 'ed25519', 'adcp');
        const refused = new McpProbe(crawler, url(), {
          timeoutMs: 5000,
          maxBytes: 1 << 20,
          sign: (r) => signRequest({ key: revoked, namespace: 'adcp', now: new Date(), ...r }),
        });
        await expect(refused.initialize()).rejects.toThrow(/401/);
      });
    }),
);
