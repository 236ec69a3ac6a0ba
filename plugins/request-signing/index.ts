import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { ConfigError } from '../../core/config-error.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { Http } from '../../core/http.ts';
import { RequestVerifier, type RequestVerifierPort } from '../../core/ports/request-verifier.ts';
import type { PublicJwk } from '../../core/ports/signer.ts';
import { createRequestVerifier } from '../../lib/rfc9421/request.ts';
import { createJwksResolver, type SignerJwk } from '../../lib/rfc9421/jwks-resolver.ts';
import { jwksCache, replayStore, revocations } from './stores.ts';
import { signerKeys } from './keys.ts';
import { probeRoutes } from './probe.ts';

const taskName = v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{1,63}$/, 'must be task names'));

const capacity = v.pipe(v.number(), v.integer(), v.minValue(1));

const publicJwk = v.pipe(
  v.looseObject({ kid: v.pipe(v.string(), v.minLength(1)), kty: v.string() }),
  v.check((k) => !('d' in k), 'must be a public key (no d)'),
);

const signer = v.pipe(
  v.object({
    /** Name of the buyer agent (logged with each verified request). */
    id: v.pipe(v.string(), v.minLength(1)),
    brandJsonUrl: v.optional(v.pipe(v.string(), v.url())),
    /** The buyer agent's url in its brand.json `agents[]` (picks the entry when there are several). */
    agentUrl: v.optional(v.pipe(v.string(), v.url())),
    jwksUri: v.optional(v.pipe(v.string(), v.url())),
    /** The signer's public keys pinned here (a JWKS document) instead of fetched. */
    jwks: v.optional(v.object({ keys: v.pipe(v.array(publicJwk), v.minLength(1)) })),
    /** Live nonces per key id of this signer before `request_signature_rate_abuse` (default: `perKeyidCap`). */
    perKeyidCap: v.optional(capacity),
  }),
  v.check((s) => !!(s.brandJsonUrl || s.jwksUri) !== !!s.jwks, 'give brandJsonUrl or jwksUri, or jwks'),
);

const mountPath = v.pipe(v.string(), v.regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'must be paths like /sales/mcp'));

const options = v.object({
  /** `covers_content_digest`: must signatures cover the body (`required`), must they not (`forbidden`), or either. */
  coversContentDigest: v.optional(v.picklist(['required', 'forbidden', 'either'], 'must be required, forbidden or either'), 'either'),
  /** Operations refused unsigned (`request_signature_required`). */
  requiredFor: v.optional(v.array(taskName), []),
  /** Operations whose signatures are verified when present (default: every task of the deployment). */
  supportedFor: v.optional(v.array(taskName)),
  /** Buyer agents whose signing keys are trusted: brand.json -> jwks_uri, or pinned (keys with `{ns}_use: "request-signing"`). */
  signers: v.optional(v.array(signer), []),
  /** Key ids refused from the start. */
  revoked: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), []),
  /** Live nonces per key id before `request_signature_rate_abuse`. */
  perKeyidCap: v.optional(capacity, 100_000),
  /** Fetch brand.json / JWKS over http (loopback tests only). */
  allowHttpKeys: v.optional(v.boolean(), false),
  /**
   * Sandbox deployments only: a verify-only endpoint for black-box graders at `POST {mount}/{ns}/...`
   * under each mount, which also refuses unsigned calls of `requiredFor` (the graders' profile) and
   * executes nothing.
   */
  probe: v.optional(v.object({ mounts: v.pipe(v.array(mountPath), v.minLength(1)), requiredFor: v.optional(v.array(taskName), []) })),
});

export type RequestSigningOptions = v.InferInput<typeof options>;

/**
 * Verification of buyer-signed requests (RFC 9421, the AdCP request-signing profile) for every
 * task host: the gateway asks this plugin before it authenticates the bearer credential, and
 * `get_{ns}_capabilities` publishes its policy as `request_signing`. Keys come from each trusted buyer's
 * brand.json `jwks_uri` through the SSRF-guarded crawler, or are pinned in the options; the replay
 * cache and revocations are in this plugin's tables, so every instance sees every nonce.
 */
export default definePlugin({
  name: 'request-signing',
  provides: [RequestVerifier],
  deps: { db: Database, clock: Clock, http: Http, crawler: optional(Crawler) },
  options,
  env: {
    REQUEST_SIGNING_REQUIRED_FOR: { path: 'requiredFor', type: 'csv' },
    REQUEST_SIGNING_CONTENT_DIGEST: 'coversContentDigest',
  },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, http, crawler }, kernel) {
    const o = kernel.options;
    const ns = kernel.config.protocol.namespace;
    const notSupported = o.supportedFor ? o.requiredFor.filter((op) => !o.supportedFor!.includes(op)) : [];
    if (notSupported.length) throw new ConfigError(`plugins.request-signing.requiredFor: ${notSupported.join(', ')} must also be in supportedFor`);
    const remote = o.signers.filter((s) => !s.jwks);
    if (!crawler && remote.length) kernel.logger.warn('no crawler port in this deployment: signers\u2019 keys cannot be fetched');

    const pinned = o.signers.flatMap((s) => (s.jwks ? [{ id: s.id, keys: s.jwks.keys as PublicJwk[] }] : []));
    const fetched =
      crawler && remote.length
        ? createJwksResolver({ cache: jwksCache(db), clock, crawler, namespace: ns }, remote, { purpose: 'request-signing', requireHttps: !o.allowHttpKeys })
        : null;
    const keys = signerKeys(pinned, fetched);
    const caps = new Map(o.signers.flatMap((s) => (s.perKeyidCap ? [[s.id, s.perKeyidCap] as const] : [])));
    const replay = replayStore(db);
    const revoked = revocations(db);
    const shared = {
      namespace: ns,
      keys,
      replay,
      revocation: revoked,
      clock,
      perKeyidCap: (jwk: PublicJwk) => caps.get((jwk as SignerJwk).sender ?? '') ?? o.perKeyidCap,
    };
    const verify = createRequestVerifier({ ...shared, policy: { coversContentDigest: o.coversContentDigest, requiredFor: o.requiredFor } });
    if (o.probe) {
      const requiredFor = [...new Set([...o.requiredFor, ...o.probe.requiredFor])];
      const probeVerify = createRequestVerifier({ ...shared, policy: { coversContentDigest: o.coversContentDigest, requiredFor } });
      http.add(...probeRoutes(o.probe.mounts, ns, probeVerify, kernel.config.server));
    }
    const port: RequestVerifierPort = {
      async verify(request, context) {
        const result = await verify(request, context);
        if (!result.ok) return { ok: false, code: result.code, message: result.message };
        if (!result.signed) return { ok: true, signed: false };
        return { ok: true, signed: true, keyid: result.keyid, signer: (await keys.senderOf(result.keyid)) ?? undefined };
      },
      policy: { coversContentDigest: o.coversContentDigest, requiredFor: o.requiredFor, supportedFor: o.supportedFor },
    };
    kernel.provide(RequestVerifier, port);
    kernel.scheduler.add({ name: 'purge-nonces', intervalMs: 60_000, runAtStart: false, run: async () => void (await replay.purge(clock.now())) });
    return {
      async start() {
        if (o.revoked.length) await revoked.revoke(o.revoked, clock.now());
      },
    };
  },
});
