import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { ConfigError } from '../../core/config-error.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { RequestVerifier, type RequestVerifierPort } from '../../core/ports/request-verifier.ts';
import { createRequestVerifier } from '../../lib/rfc9421/request.ts';
import { createJwksResolver } from '../../lib/rfc9421/jwks-resolver.ts';
import { jwksCache, replayStore, revocations } from './stores.ts';

const taskName = v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{1,63}$/, 'must be task names'));

const signer = v.pipe(
  v.object({
    /** Name of the buyer agent (logged with each verified request). */
    id: v.pipe(v.string(), v.minLength(1)),
    brandJsonUrl: v.optional(v.pipe(v.string(), v.url())),
    /** The buyer agent's url in its brand.json `agents[]` (picks the entry when there are several). */
    agentUrl: v.optional(v.pipe(v.string(), v.url())),
    jwksUri: v.optional(v.pipe(v.string(), v.url())),
  }),
  v.check((s) => !!(s.brandJsonUrl || s.jwksUri), 'give brandJsonUrl or jwksUri'),
);

const options = v.object({
  /** `covers_content_digest`: must signatures cover the body (`required`), must they not (`forbidden`), or either. */
  coversContentDigest: v.optional(v.picklist(['required', 'forbidden', 'either'], 'must be required, forbidden or either'), 'either'),
  /** Operations refused unsigned (`request_signature_required`). */
  requiredFor: v.optional(v.array(taskName), []),
  /** Operations whose signatures are verified when present (default: every task of the deployment). */
  supportedFor: v.optional(v.array(taskName)),
  /** Buyer agents whose signing keys are trusted: brand.json -> jwks_uri (keys with `{ns}_use: "request-signing"`). */
  signers: v.optional(v.array(signer), []),
  /** Key ids refused from the start. */
  revoked: v.optional(v.array(v.pipe(v.string(), v.minLength(1))), []),
  /** Live nonces per key id before `request_signature_rate_abuse`. */
  perKeyidCap: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 100_000),
  /** Fetch brand.json / JWKS over http (loopback tests only). */
  allowHttpKeys: v.optional(v.boolean(), false),
});

export type RequestSigningOptions = v.InferInput<typeof options>;

/**
 * Verification of buyer-signed requests (RFC 9421, the AdCP request-signing profile) for every
 * task host: the gateway asks this plugin before it authenticates the bearer credential, and
 * `get_{ns}_capabilities` publishes its policy as `request_signing`. Keys come from each trusted buyer's
 * brand.json `jwks_uri` through the SSRF-guarded crawler; the replay cache and revocations are in
 * this plugin's tables, so every instance sees every nonce.
 */
export default definePlugin({
  name: 'request-signing',
  provides: [RequestVerifier],
  deps: { db: Database, clock: Clock, crawler: optional(Crawler) },
  options,
  env: {
    REQUEST_SIGNING_REQUIRED_FOR: { path: 'requiredFor', type: 'csv' },
    REQUEST_SIGNING_CONTENT_DIGEST: 'coversContentDigest',
  },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, crawler }, kernel) {
    const o = kernel.options;
    const ns = kernel.config.protocol.namespace;
    const notSupported = o.supportedFor ? o.requiredFor.filter((op) => !o.supportedFor!.includes(op)) : [];
    if (notSupported.length) throw new ConfigError(`plugins.request-signing.requiredFor: ${notSupported.join(', ')} must also be in supportedFor`);
    if (!crawler && o.signers.length) kernel.logger.warn('no crawler port in this deployment: signers\u2019 keys cannot be fetched');

    const keys = crawler
      ? createJwksResolver({ cache: jwksCache(db), clock, crawler, namespace: ns }, o.signers, { purpose: 'request-signing', requireHttps: !o.allowHttpKeys })
      : { resolve: async () => null, senderOf: async () => null };
    const replay = replayStore(db);
    const revoked = revocations(db);
    const verify = createRequestVerifier({
      namespace: ns,
      keys,
      replay,
      revocation: revoked,
      clock,
      perKeyidCap: o.perKeyidCap,
      policy: { coversContentDigest: o.coversContentDigest, requiredFor: o.requiredFor },
    });
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
