import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Http } from '../../core/http.ts';
import { ResponseSigner, Signer, type ResponseSignerPort } from '../../core/ports/signer.ts';
import { createKeyring } from './keyring.ts';
import { signerOptions } from './options.ts';
import { SecretBox } from '../../core/ports/secrets.ts';

/**
 * The Signer adapter with asymmetric keys (Ed25519 or ECDSA P-256): keys from configuration, or generated
 * on first start and kept sealed in its `signer_keys` table. Publishes the JWKS at
 * `/.well-known/jwks.json` and the revocation list beside it. Also the ResponseSigner: a second
 * keyring of `response-signing` keys (always in the database), kept and published only when a
 * feature enables it.
 */
export default definePlugin({
  name: 'signer-keyring',
  provides: [Signer, ResponseSigner],
  deps: { db: Database, http: Http, clock: Clock, box: SecretBox },
  options: signerOptions,
  env: { SIGNER_ALG: 'alg' },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, http, clock, box }, kernel) {
    const { options: o } = kernel;
    const namespace = kernel.config.protocol.namespace;
    const keyring = createKeyring({ name: 'signer-keyring', alg: o.alg, namespace, db, clock, box, options: o });
    kernel.provide(Signer, keyring);
    const responseKeys = createKeyring({ name: 'signer-keyring', alg: o.alg, namespace, purpose: 'response-signing', db, clock, box, options: o });
    let responseSigning = false;
    const responseSigner: ResponseSignerPort = {
      enable: () => {
        responseSigning = true;
      },
      active: () => {
        if (!responseSigning) throw new Error('signer-keyring: response signing is not enabled (a feature calls ResponseSigner.enable() in its init)');
        return responseKeys.active();
      },
      jwks: () => (responseSigning ? responseKeys.jwks() : { keys: [] }),
    };
    kernel.provide(ResponseSigner, responseSigner);
    // Keys kept in the database: pick up rotations and revocations made by other instances.
    const reload = async () => {
      if (!o.keys?.length) await keyring.reload();
      if (responseSigning) await responseKeys.reload();
    };
    kernel.scheduler.add({ name: 'reload-keys', intervalMs: o.reloadSeconds * 1000, runAtStart: false, run: reload });
    const revocations = () => {
      const webhook = keyring.revocations();
      if (!responseSigning) return webhook;
      const response = responseKeys.revocations();
      return {
        keyids: [...new Set([...webhook.keyids, ...response.keyids])],
        updatedAt: new Date(Math.max(response.updatedAt.getTime(), webhook.updatedAt.getTime())),
      };
    };
    http.add(
      {
        method: 'GET',
        path: '/.well-known/jwks.json',
        handle: () =>
          Response.json(
            { keys: [...keyring.jwks().keys, ...responseSigner.jwks().keys] },
            {
              headers: { 'cache-control': `public, max-age=${o.jwksMaxAgeSeconds}`, 'content-type': 'application/jwk-set+json' },
            },
          ),
      },
      {
        method: 'GET',
        path: '/.well-known/jwks-revocations.json',
        handle: () => {
          const r = revocations();
          const nextUpdate = new Date(Math.max(r.updatedAt.getTime(), clock.now().getTime()) + o.reloadSeconds * 1000);
          return Response.json(
            { keyids: r.keyids, updated_at: r.updatedAt.toISOString(), next_update: nextUpdate.toISOString() },
            { headers: { 'cache-control': `public, max-age=${o.reloadSeconds}` } },
          );
        },
      },
    );
    return {
      async start() {
        await keyring.reload();
        if (responseSigning) await responseKeys.reload();
      },
    };
  },
});
