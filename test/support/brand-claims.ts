import { expect } from 'bun:test';
import { createHash } from 'node:crypto';
import { flattenedVerify, importJWK } from 'jose';
import { canonicalJson } from '../../lib/canonical-json.ts';
import auth from '../../plugins/auth/index.ts';
import tasks from '../../plugins/tasks/index.ts';
import idempotency from '../../plugins/idempotency/index.ts';
import crawlerHttp from '../../plugins/crawler-http/index.ts';
import brandAgent from '../../plugins/brand-agent/index.ts';
import signerKeyring from '../../plugins/signer-keyring/index.ts';
import restTasks from '../../hosts/rest/tasks.ts';
import type { Body } from './agent.ts';
import { startServer, type TestServer } from './server.ts';
import type { AdapterName } from './db.ts';
import { loopbackResolver, TEST_CERT } from './loopback.ts';
import { startTlsFront } from './tls-front.ts';
import { bothVersionsErrors } from './schemas.ts';

export const schemaOf = (task: string) => `brand/${task.replaceAll('_', '-')}-response.json`;

/** The answer validates against 3.0.6 and 3.1.19; on success its signed_response verifies with jose against the published response-signing key. */
export async function checkSigned(server: TestServer, task: string, body: Body, binding: Record<string, unknown>): Promise<Record<string, any>> {
  expect(bothVersionsErrors(schemaOf(task), body)).toEqual([]);
  const { signed_response: signed, status: _status, context: _context, ...unsigned } = body;
  const jwks = (await (await server.fetch('/.well-known/jwks.json')).json()) as { keys: Array<Record<string, any>> };
  const header = JSON.parse(Buffer.from(signed.protected, 'base64url').toString());
  expect(header).toEqual({ alg: 'EdDSA', kid: expect.any(String), typ: 'adcp-response-payload+jws' });
  const jwk = jwks.keys.find((k) => k.kid === header.kid)!;
  expect(jwk.adcp_use).toBe('response-signing');
  // The webhook key is another key, published with its own purpose.
  expect(jwks.keys.filter((k) => k.adcp_use === 'webhook-signing').map((k) => k.kid)).not.toContain(header.kid);
  const key = await importJWK(jwk, 'EdDSA');
  const jws = { protected: signed.protected, payload: Buffer.from(canonicalJson(signed.payload)).toString('base64url'), signature: signed.signature };
  const verified = await flattenedVerify(jws, key);
  expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual(signed.payload);
  // A changed answer no longer verifies.
  const forged = { ...signed.payload, response: { ...signed.payload.response, forged: true } };
  await expect(flattenedVerify({ ...jws, payload: Buffer.from(canonicalJson(forged)).toString('base64url') }, key)).rejects.toThrow();
  const p = signed.payload;
  expect(p.response).toEqual(unsigned);
  expect(p).toMatchObject({ typ: 'adcp-response-payload+jws', task, agent_url: expect.stringMatching(/^http:\/\/[^/]+\/mcp$/) });
  expect(p.exp - p.iat).toBe(3600);
  expect(p.request_hash).toBe(`sha256:${createHash('sha256').update(canonicalJson(binding)).digest('base64url')}`);
  return p;
}

/**
 * A brand agent (REST tasks) without the registry in its deployment, reading `registry` at a URL over
 * https (a TLS front on loopback) through the crawler.
 */
export async function brandAgentReadingRegistry(
  adapter: AdapterName,
  schema: string,
  registry: TestServer,
  brands: NonNullable<Parameters<typeof brandAgent>[0]>['brands'],
  testTokens: Array<{ token: string }> = [],
): Promise<{ agent: TestServer; front: ReturnType<typeof startTlsFront> }> {
  const front = startTlsFront();
  front.route('registry.pub.test', registry.base);
  const agent = await startServer(
    adapter,
    schema,
    [
      auth({ testTokens }),
      crawlerHttp({ resolver: loopbackResolver(['pub.test']), ca: TEST_CERT, allowlist: ['127.0.0.1'] }),
      signerKeyring(),
      tasks({ worker: false }),
      idempotency(),
      brandAgent({ brands, registryUrl: front.url('registry.pub.test') }),
      restTasks(),
    ],
    { env: { PROTOCOL_NAMESPACE: 'adcp' } },
  );
  return { agent, front };
}
