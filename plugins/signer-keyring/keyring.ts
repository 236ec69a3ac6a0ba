import { readFileSync } from 'node:fs';
import type * as v from 'valibot';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { KeyPurpose, PublicJwk, SignatureAlg, SignerPort, SigningKey } from '../../core/ports/signer.ts';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';
import { ConfigError } from '../../core/config.ts';
import { algOfJwk, pemToPrivateJwk, signingKeyFrom } from '../../lib/signer/keys.ts';
import { ensureActiveKey, loadKeys } from './store.ts';
import type { signerOptions } from './options.ts';

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

interface KeyringDeps {
  name: string;
  alg: SignatureAlg;
  namespace: string;
  /** Default webhook-signing; response-signing keys are always kept in the database (configured keys are webhook keys). */
  purpose?: KeyPurpose;
  db: DatabasePort;
  clock: ClockPort;
  box: SecretBoxPort;
  options: v.InferOutput<typeof signerOptions>;
}

/** The keys of one deployment: from configuration, or generated once and kept (sealed) in the database. */
export function createKeyring({ name, alg, namespace: ns, purpose = 'webhook-signing', db, clock, box, options: o }: KeyringDeps): ReloadableSigner {
  const configured = purpose === 'webhook-signing' && !!o.keys?.length;
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
    await ensureActiveKey(db, alg, ns, clock.now(), box, purpose);
    const rows = await loadKeys(db, alg, box, purpose);
    const revokedRows = rows.filter((r) => r.status === 'revoked');
    const revoked = [...new Set([...revokedRows.map((r) => r.kid), ...o.revoked])];
    const activeRow = rows.find((r) => r.status === 'active')!;
    const published: PublicJwk[] = [];
    let active: SigningKey | null = null;
    for (const r of rows) {
      if (r.status === 'revoked' || revoked.includes(r.kid)) continue;
      const key = await signingKeyFrom(r.private_jwk, r.kid, alg, ns, purpose);
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
      state = configured ? await fromConfig() : await fromDatabase();
    },
  };
}
