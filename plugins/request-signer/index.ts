import * as v from 'valibot';
import { readFileSync } from 'node:fs';
import { definePlugin } from '../../core/plugin.ts';
import { ConfigError } from '../../core/config-error.ts';
import { Http } from '../../core/http.ts';
import { Clock } from '../../core/ports/clock.ts';
import { RequestSigner, type RequestSignerPort } from '../../core/ports/request-signer.ts';
import type { SigningKey } from '../../core/ports/signer.ts';
import { algOfJwk, pemToPrivateJwk, signingKeyFrom } from '../../lib/signer/keys.ts';
import { signRequest } from '../../lib/rfc9421/sign.ts';

const options = v.pipe(
  v.object({
    kid: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be 1-128 of A-Z a-z 0-9 . _ : -')),
    /** Private JWK (Ed25519 or P-256, with `d`). */
    jwk: v.optional(v.record(v.string(), v.unknown())),
    /** Path of a PKCS#8 PEM private key (Ed25519 or P-256). */
    pemFile: v.optional(v.pipe(v.string(), v.minLength(1))),
    /** Cover the body with `content-digest` (unless the agent called forbids it). */
    coverDigest: v.optional(v.boolean(), true),
  }),
  v.check((k) => (k.jwk ? 1 : 0) + (k.pemFile ? 1 : 0) === 1, 'give exactly one of jwk or pemFile'),
);

/**
 * Signs this deployment's own outgoing agent calls (registry probes, capability refresh) with the
 * RFC 9421 request-signing profile. The key comes from configuration; its public half is served at
 * `/.well-known/request-signing-jwks.json` with `{ns}_use: "request-signing"` for the operator's
 * brand.json `jwks_uri`.
 */
export default definePlugin({
  name: 'request-signer',
  provides: [RequestSigner],
  deps: { http: Http, clock: Clock },
  options,
  env: { REQUEST_SIGNING_KID: 'kid', REQUEST_SIGNING_KEY_FILE: 'pemFile' },
  init({ http, clock }, kernel) {
    const ns = kernel.config.protocol.namespace;
    const o = kernel.options;
    let key: SigningKey | null = null;
    const current = () => {
      if (!key) throw new Error('request-signer: the key is not loaded yet (the plugin has not started)');
      return key;
    };
    const port: RequestSignerPort = {
      sign: (request) => signRequest({ key: current(), namespace: ns, now: clock.now(), ...request, coverDigest: o.coverDigest }),
      jwks: () => ({ keys: [{ ...current().publicJwk, [`${ns}_use`]: 'request-signing' }] }),
    };
    kernel.provide(RequestSigner, port);
    http.add({
      method: 'GET',
      path: '/.well-known/request-signing-jwks.json',
      handle: () => Response.json(port.jwks(), { headers: { 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=300' } }),
    });
    return {
      async start() {
        const jwk = o.jwk ? (o.jwk as JsonWebKey) : await readPem(o.pemFile!);
        const alg = algOfJwk(jwk);
        if (!alg || !jwk.d) throw new ConfigError('plugins.request-signer: the key must be a private Ed25519 or P-256 key');
        key = await signingKeyFrom(jwk, o.kid, alg, ns);
      },
    };
  },
});

/** A PKCS#8 PEM does not say its curve up front: read it as Ed25519, else as P-256. */
async function readPem(file: string): Promise<JsonWebKey> {
  const pem = readFileSync(file, 'utf8');
  try {
    return await pemToPrivateJwk(pem, 'ed25519');
  } catch {
    return pemToPrivateJwk(pem, 'ecdsa-p256-sha256');
  }
}
