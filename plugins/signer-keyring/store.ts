import { sql } from '../../core/sql.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { KeyPurpose, SignatureAlg } from '../../core/ports/signer.ts';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';
import { generatePrivateJwk, newKid, publicJwkOf } from '../../lib/signer/keys.ts';

export interface StoredKey {
  kid: string;
  alg: SignatureAlg;
  private_jwk: JsonWebKey;
  status: 'active' | 'published' | 'revoked';
  updated_at: Date;
}

// Serializes key generation between instances starting together (one generated key, not two).
const KEYGEN_LOCK = 0x7369676e; // "sign"

/** The private JWK as stored: sealed (`{sealed}`) when a SecretBox encrypts, else as is. */
async function sealJwk(jwk: JsonWebKey, box?: SecretBoxPort): Promise<unknown> {
  return box?.encrypting ? { sealed: await box.seal(JSON.stringify(jwk)) } : jwk;
}

async function openJwk(stored: any, box?: SecretBoxPort): Promise<JsonWebKey> {
  if (stored && typeof stored.sealed === 'string') {
    if (!box) throw new Error('signer key is sealed but no SecretBox is available');
    return JSON.parse(await box.open(stored.sealed));
  }
  return stored;
}

async function insertKey(tx: Queryable, alg: SignatureAlg, namespace: string, now: Date, box: SecretBoxPort | undefined, purpose: KeyPurpose): Promise<string> {
  const kid = newKid(alg, now);
  const jwk = await generatePrivateJwk(alg);
  await tx.query(sql`INSERT INTO signer_keys (kid, alg, purpose, private_jwk, public_jwk, status)
    VALUES (${kid}::text, ${alg}::text, ${purpose}::text, ${await sealJwk(jwk, box)}::jsonb, ${publicJwkOf(jwk, kid, alg, namespace, purpose)}::jsonb, 'active')`);
  return kid;
}

/** Make sure one active key of `alg` and `purpose` exists, generating and persisting one on first start. */
export async function ensureActiveKey(
  db: DatabasePort,
  alg: SignatureAlg,
  namespace: string,
  now: Date,
  box?: SecretBoxPort,
  purpose: KeyPurpose = 'webhook-signing',
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(sql`SELECT pg_advisory_xact_lock(${KEYGEN_LOCK}::bigint)`);
    const [row] = await tx.query(sql`SELECT kid FROM signer_keys WHERE alg = ${alg}::text AND purpose = ${purpose}::text AND status = 'active'`);
    if (!row) await insertKey(tx, alg, namespace, now, box, purpose);
  });
}

export async function loadKeys(db: Queryable, alg: SignatureAlg, box?: SecretBoxPort, purpose: KeyPurpose = 'webhook-signing'): Promise<StoredKey[]> {
  const rows = await db.query<StoredKey>(sql`SELECT kid, alg, private_jwk, status, updated_at FROM signer_keys
    WHERE alg = ${alg}::text AND purpose = ${purpose}::text ORDER BY created_at`);
  return Promise.all(rows.map(async (r) => ({ ...r, private_jwk: await openJwk(r.private_jwk, box) })));
}

/**
 * Rotate: a new key becomes active, the previous active key stays published (receivers holding
 * in-flight webhooks signed with it can still verify). Returns the new key id.
 */
export async function rotateKey(
  db: DatabasePort,
  alg: SignatureAlg,
  namespace: string,
  now: Date,
  box?: SecretBoxPort,
  purpose: KeyPurpose = 'webhook-signing',
): Promise<string> {
  return db.transaction(async (tx) => {
    await tx.query(sql`SELECT pg_advisory_xact_lock(${KEYGEN_LOCK}::bigint)`);
    await tx.query(sql`UPDATE signer_keys SET status = 'published', updated_at = now()
      WHERE alg = ${alg}::text AND purpose = ${purpose}::text AND status = 'active'`);
    return insertKey(tx, alg, namespace, now, box, purpose);
  });
}

/** Revoke a key: withdrawn from the JWKS and listed as revoked. Revoking the active key rotates first. */
export async function revokeKey(db: DatabasePort, kid: string, namespace: string, now: Date, box?: SecretBoxPort): Promise<void> {
  const [row] = await db.query<{ alg: SignatureAlg; status: string; purpose: KeyPurpose }>(
    sql`SELECT alg, status, purpose FROM signer_keys WHERE kid = ${kid}::text`,
  );
  if (!row) throw new Error(`unknown key ${kid}`);
  if (row.status === 'active') await rotateKey(db, row.alg, namespace, now, box, row.purpose);
  await db.query(sql`UPDATE signer_keys SET status = 'revoked', updated_at = now() WHERE kid = ${kid}::text`);
}
