import * as v from 'valibot';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Http } from '../../core/http.ts';
import { Signer, type PublicJwk, type SignatureAlg, type SignerPort, type SigningKey } from '../../core/ports/signer.ts';
import { ConfigError } from '../../core/config.ts';
import { algOfJwk, pemToPrivateJwk, signingKeyFrom } from './keys.ts';
import { ensureActiveKey, loadKeys } from './store.ts';
import { SecretBox } from '../../core/ports/secrets.ts';

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
 * `/.well-known/jwks.json` and their revocation list beside it.
 */
export function defineSignerPlugin(name: string, alg: SignatureAlg) {
  // register() builds the adapter; start()/stop() need its loader and timer (same ctx object).
  const lifecycle = new WeakMap<object, { start(): Promise<void>; stop(): void }>();
  return definePlugin({
    name,
    provides: [Signer],
    requires: [Database, Http],
    options,
    migrations: loadMigrations(join(import.meta.dir, 'migrations')),
    register(ctx) {
      const ns = ctx.config.protocol.namespace;
      const db = ctx.get(Database);
      const clock = ctx.tryGet(Clock);
      let state: State | null = null;
      let timer: ReturnType<typeof setInterval> | null = null;
      const current = (): State => {
        if (!state) throw new Error(`${name}: keys are not loaded yet (the plugin has not started)`);
        return state;
      };

      const fromConfig = async (): Promise<State> => {
        const keys = ctx.options.keys!;
        const loaded: { key: SigningKey; status: string }[] = [];
        for (const k of keys) {
          const jwk = k.jwk ? (k.jwk as JsonWebKey) : await pemToPrivateJwk(readFileSync(k.pemFile!, 'utf8'), alg);
          if (algOfJwk(jwk) !== alg) throw new ConfigError(`plugins.${name}.keys: key ${k.kid} is not a ${alg} key`);
          loaded.push({ key: await signingKeyFrom(jwk, k.kid, alg, ns), status: k.status });
        }
        const actives = loaded.filter((k) => k.status === 'active');
        if (actives.length > 1) throw new ConfigError(`plugins.${name}.keys: exactly one key may be active`);
        const active = actives[0] ?? loaded.find((k) => k.status !== 'revoked');
        if (!active) throw new ConfigError(`plugins.${name}.keys: no usable (non-revoked) key`);
        const revoked = [...new Set([...loaded.filter((k) => k.status === 'revoked').map((k) => k.key.keyid), ...ctx.options.revoked])];
        return {
          active: active.key,
          published: loaded.filter((k) => k.status !== 'revoked' && !revoked.includes(k.key.keyid)).map((k) => k.key.publicJwk),
          revoked,
          revokedAt: clock?.now() ?? new Date(),
        };
      };

      const fromDatabase = async (): Promise<State> => {
        const box = ctx.get(SecretBox);
        await ensureActiveKey(db, alg, ns, box);
        const rows = await loadKeys(db, alg, box);
        const revokedRows = rows.filter((r) => r.status === 'revoked');
        const revoked = [...new Set([...revokedRows.map((r) => r.kid), ...ctx.options.revoked])];
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
        return { active, published, revoked, revokedAt: revokedRows.length ? revokedAt : (clock?.now() ?? new Date()) };
      };

      const reload = async () => {
        state = ctx.options.keys?.length ? await fromConfig() : await fromDatabase();
      };

      const port: ReloadableSigner = {
        active: () => current().active,
        jwks: () => ({ keys: current().published }),
        revocations: () => ({ keyids: current().revoked, updatedAt: current().revokedAt }),
        reload,
      };
      ctx.provide(Signer, port);
      lifecycle.set(ctx, {
        async start() {
          await reload();
          if (!ctx.options.keys?.length) {
            timer = setInterval(() => reload().catch((err) => ctx.logger.warn({ err }, 'signer key reload failed')), ctx.options.reloadSeconds * 1000);
            timer.unref?.();
          }
        },
        stop() {
          if (timer) clearInterval(timer);
        },
      });

      const maxAge = ctx.options.jwksMaxAgeSeconds;
      ctx.get(Http).add(
        {
          method: 'GET',
          path: '/.well-known/jwks.json',
          handle: () =>
            Response.json(port.jwks(), { headers: { 'cache-control': `public, max-age=${maxAge}`, 'content-type': 'application/jwk-set+json' } }),
        },
        {
          method: 'GET',
          path: '/.well-known/jwks-revocations.json',
          handle: () => {
            const r = port.revocations();
            const nextUpdate = new Date(Math.max(r.updatedAt.getTime(), Date.now()) + ctx.options.reloadSeconds * 1000);
            return Response.json(
              { keyids: r.keyids, updated_at: r.updatedAt.toISOString(), next_update: nextUpdate.toISOString() },
              { headers: { 'cache-control': `public, max-age=${ctx.options.reloadSeconds}` } },
            );
          },
        },
      );
    },
    async start(ctx) {
      await lifecycle.get(ctx)!.start();
    },
    stop(ctx) {
      lifecycle.get(ctx)?.stop();
    },
  });
}
