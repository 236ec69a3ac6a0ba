import * as v from 'valibot';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database, type DatabasePort } from '../../core/ports/database.ts';
import { Clock, type ClockPort } from '../../core/ports/clock.ts';
import { Http } from '../../core/http.ts';
import { Signer, type PublicJwk, type SignatureAlg, type SignerPort, type SigningKey } from '../../core/ports/signer.ts';
import { ConfigError } from '../../core/config.ts';
import { algOfJwk, pemToPrivateJwk, signingKeyFrom } from './keys.ts';
import { ensureActiveKey, loadKeys } from './store.ts';
import { SecretBox, type SecretBoxPort } from '../../core/ports/secrets.ts';

const configuredKey = v.pipe(
  v.object({
    kid: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be 1-128 of A-Z a-z 0-9 . _ : -')),
    /** Private JWK (with `d`). */
    jwk: v.optional(v.record(v.string(), v.unknown())),
    /** Path of a PKCS#8 PEM private key. */
    pemFile: v.optional(v.pipe(v.string(), v.minLength(1))),
    status: v.optional(v.picklist(['active', 'published', 'revoked']), 'published'),
  }),
  v.check((k) => (k.jwk ? 1 : 0) + (k.pemFile ? 1 : 0) === 1, 'give exactly one of jwk or pemFile'),
);

const options = v.object({
  /** Keys from configuration; when absent, keys are generated on first start and kept in the database. */
  keys: v.optional(v.array(configuredKey)),
  /** Extra revoked key ids (beside keys revoked in the database). */
  revoked: v.optional(v.array(v.string()), []),
  /** How often each instance reloads keys from the database (rotation done elsewhere shows up). */
  reloadSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 60),
  /** Max-age of the JWKS response. */
  jwksMaxAgeSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 300),
});

export type SignerOptions = v.InferInput<typeof options>;

/** A SignerPort adapter that can also reload its keys (after a rotation or revocation). */
export interface ReloadableSigner extends SignerPort {
  reload(): Promise<void>;
}

interface State {
  active: SigningKey;
  published: PublicJwk[];
  revoked: string[];
  revokedAt: Date;
}

/**
 * The two asymmetric signer adapters differ only by algorithm; both publish their JWKS at
 * `/.well-known/jwks.json` and their revocation list beside it. The `signing_keys` table belongs
 * to the one signer plugin of a deployment (two Signer providers are an assembly error).
 */
export function defineSignerPlugin(name: string, alg: SignatureAlg) {
  return definePlugin({
    name,
    provides: [Signer],
    deps: { db: Database, http: Http, clock: Clock, box: SecretBox },
    options,
    migrations: loadMigrations(join(import.meta.dir, 'migrations')),
    init({ db, http, clock, box }, kernel) {
      const { options: o } = kernel;
      const keyring = createKeyring({ name, alg, namespace: kernel.config.protocol.namespace, db, clock, box, options: o });
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
}

interface KeyringDeps {
  name: string;
  alg: SignatureAlg;
  namespace: string;
  db: DatabasePort;
  clock: ClockPort;
  box: SecretBoxPort;
  options: v.InferOutput<typeof options>;
}

/** The keys of one deployment: from configuration, or generated once and kept (sealed) in the database. */
function createKeyring({ name, alg, namespace: ns, db, clock, box, options: o }: KeyringDeps): ReloadableSigner {
  let state: State | null = null;
  const current = (): State => {
    if (!state) throw new Error(`${name}: keys are not loaded yet (the plugin has not started)`);
    return state;
  };

  const fromConfig = async (): Promise<State> => {
    const loaded: { key: SigningKey; status: string }[] = [];
    for (const k of o.keys!) {
      const jwk = k.jwk ? (k.jwk as JsonWebKey) : await pemToPrivateJwk(readFileSync(k.pemFile!, 'utf8'), alg);
      if (algOfJwk(jwk) !== alg) throw new ConfigError(`plugins.${name}.keys: key ${k.kid} is not a ${alg} key`);
      loaded.push({ key: await signingKeyFrom(jwk, k.kid, alg, ns), status: k.status });
    }
    const actives = loaded.filter((k) => k.status === 'active');
    if (actives.length > 1) throw new ConfigError(`plugins.${name}.keys: exactly one key may be active`);
    const active = actives[0] ?? loaded.find((k) => k.status !== 'revoked');
    if (!active) throw new ConfigError(`plugins.${name}.keys: no usable (non-revoked) key`);
    const revoked = [...new Set([...loaded.filter((k) => k.status === 'revoked').map((k) => k.key.keyid), ...o.revoked])];
    return {
      active: active.key,
      published: loaded.filter((k) => k.status !== 'revoked' && !revoked.includes(k.key.keyid)).map((k) => k.key.publicJwk),
      revoked,
      revokedAt: clock.now(),
    };
  };

  const fromDatabase = async (): Promise<State> => {
    await ensureActiveKey(db, alg, ns, box);
    const rows = await loadKeys(db, alg, box);
    const revokedRows = rows.filter((r) => r.status === 'revoked');
    const revoked = [...new Set([...revokedRows.map((r) => r.kid), ...o.revoked])];
    const activeRow = rows.find((r) => r.status === 'active')!;
    const published: PublicJwk[] = [];
    let active: SigningKey | null = null;
    for (const r of rows) {
      if (r.status === 'revoked' || revoked.includes(r.kid)) continue;
      const key = await signingKeyFrom(r.private_jwk, r.kid, alg, ns);
      published.push(key.publicJwk);
      if (r.kid === activeRow.kid) active = key;
    }
    if (!active) throw new Error(`${name}: the active key ${activeRow.kid} is listed as revoked in the configuration`);
    const revokedAt = revokedRows.reduce((max, r) => (new Date(r.updated_at) > max ? new Date(r.updated_at) : max), new Date(0));
    return { active, published, revoked, revokedAt: revokedRows.length ? revokedAt : clock.now() };
  };

  return {
    active: () => current().active,
    jwks: () => ({ keys: current().published }),
    revocations: () => ({ keyids: current().revoked, updatedAt: current().revokedAt }),
    async reload() {
      state = o.keys?.length ? await fromConfig() : await fromDatabase();
    },
  };
}
