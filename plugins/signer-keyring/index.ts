import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Http } from '../../core/http.ts';
import { Signer } from '../../core/ports/signer.ts';
import { createKeyring } from './keyring.ts';
import { signerOptions } from './options.ts';
import { SecretBox } from '../../core/ports/secrets.ts';

/**
 * The Signer adapter with asymmetric keys (Ed25519 or ECDSA P-256): keys from configuration, or generated
 * on first start and kept sealed in its `signer_keys` table. Publishes the JWKS at
 * `/.well-known/jwks.json` and the revocation list beside it.
 */
export default definePlugin({
  name: 'signer-keyring',
  provides: [Signer],
  deps: { db: Database, http: Http, clock: Clock, box: SecretBox },
  options: signerOptions,
  env: { SIGNER_ALG: 'alg' },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, http, clock, box }, kernel) {
    const { options: o } = kernel;
    const keyring = createKeyring({ name: 'signer-keyring', alg: o.alg, namespace: kernel.config.protocol.namespace, db, clock, box, options: o });
    kernel.provide(Signer, keyring);
    if (!o.keys?.length) {
      // Keys kept in the database: pick up rotations and revocations made by other instances.
      kernel.scheduler.add({ name: 'reload-keys', intervalMs: o.reloadSeconds * 1000, runAtStart: false, run: () => keyring.reload() });
    }
    http.add(
      {
        method: 'GET',
        path: '/.well-known/jwks.json',
        handle: () =>
          Response.json(keyring.jwks(), {
            headers: { 'cache-control': `public, max-age=${o.jwksMaxAgeSeconds}`, 'content-type': 'application/jwk-set+json' },
          }),
      },
      {
        method: 'GET',
        path: '/.well-known/jwks-revocations.json',
        handle: () => {
          const r = keyring.revocations();
          const nextUpdate = new Date(Math.max(r.updatedAt.getTime(), clock.now().getTime()) + o.reloadSeconds * 1000);
          return Response.json(
            { keyids: r.keyids, updated_at: r.updatedAt.toISOString(), next_update: nextUpdate.toISOString() },
            { headers: { 'cache-control': `public, max-age=${o.reloadSeconds}` } },
          );
        },
      },
    );
    return { start: () => keyring.reload() };
  },
});
