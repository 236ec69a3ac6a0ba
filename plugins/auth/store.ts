import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Principal, Tier } from '../../core/ports/auth.ts';
import type { VerifiedIdentity } from '../../core/ports/token-verifier.ts';
import type { IdsPort } from '../../core/ports/ids.ts';

export interface Organization {
  id: string;
  name: string;
  tier: Tier;
}

/** SHA-256 of a credential; the only form in which keys are stored. One-shot: a hasher object per call costs ~10x more (every request hashes its bearer). */
export function hashKey(key: string): Buffer {
  return Bun.CryptoHasher.hash('sha256', key) as Buffer;
}

export async function createOrganization(db: Queryable, ids: IdsPort, input: { name: string; tier: Tier }): Promise<Organization> {
  const id = ids.uuid7();
  await db.query(sql`INSERT INTO organizations (id, name, tier) VALUES (${id}::uuid, ${input.name}::text, ${input.tier}::text)`);
  return { id, name: input.name, tier: input.tier };
}

export async function findOrganization(db: Queryable, idOrName: string): Promise<Organization | null> {
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrName);
  const rows = await db.query<Organization>(
    isUuid
      ? sql`SELECT id::text, name, tier FROM organizations WHERE id = ${idOrName}::uuid`
      : sql`SELECT id::text, name, tier FROM organizations WHERE lower(name) = lower(${idOrName}::text)`,
  );
  return rows[0] ?? null;
}

export async function createUser(db: Queryable, ids: IdsPort, input: { orgId: string; name: string; email?: string }): Promise<{ id: string }> {
  const id = ids.uuid7();
  await db.query(
    sql`INSERT INTO users (id, org_id, name, email) VALUES (${id}::uuid, ${input.orgId}::uuid, ${input.name}::text, ${input.email ?? null}::text)`,
  );
  return { id };
}

/**
 * Mint an API key for an organization. The plaintext is returned once and never stored:
 * `{namespace}_` + 43 characters of base64url (256 random bits).
 */
export async function createApiKey(
  db: Queryable,
  ids: IdsPort,
  input: { orgId: string; name: string; userId?: string; namespace?: string },
): Promise<{ id: string; key: string; prefix: string }> {
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
  const key = `${input.namespace ?? 'proto'}_${secret}`;
  const prefix = key.slice(0, key.indexOf('_') + 7);
  const id = ids.uuid7();
  await db.query(sql`
    INSERT INTO api_keys (id, org_id, user_id, name, prefix, key_hash)
    VALUES (${id}::uuid, ${input.orgId}::uuid, ${input.userId ?? null}::uuid, ${input.name}::text, ${prefix}::text, ${hashKey(key)}::bytea)`);
  return { id, key, prefix };
}

/** An organization's keys (never the key itself): id, label, prefix, and when made, last used, revoked. */
export async function listApiKeys(db: Queryable, orgId: string): Promise<Record<string, unknown>[]> {
  return db.query(sql`SELECT id::text, name, prefix, created_at, last_used_at, revoked_at FROM api_keys WHERE org_id = ${orgId}::uuid ORDER BY created_at`);
}

/** Change an organization's standing (every key and user of it); false when there is no such organization. */
export async function setOrganizationTier(db: Queryable, id: string, tier: Tier): Promise<boolean> {
  const rows = await db.query(sql`UPDATE organizations SET tier = ${tier}::text WHERE id = ${id}::uuid RETURNING id`);
  return rows.length > 0;
}

export async function revokeApiKey(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query(sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${id}::uuid AND revoked_at IS NULL RETURNING id`);
  return rows.length > 0;
}

/**
 * The principal behind a key (by its hash) and the key's id, or null. Writers need not announce changes: the
 * tables' triggers (migration 003) tell every instance's credential cache on commit.
 * The lookup is by hash (an index probe), so timing reveals nothing about stored keys.
 */
export async function principalForKey(db: Queryable, keyHash: Buffer): Promise<{ principal: Principal; keyId: string } | null> {
  const rows = await db.query<{ key_id: string; org_id: string; org_name: string; tier: Tier; user_id: string | null; user_name: string | null }>(sql`
    SELECT k.id::text AS key_id, o.id::text AS org_id, o.name AS org_name, o.tier, u.id::text AS user_id, u.name AS user_name
    FROM api_keys k
    JOIN organizations o ON o.id = k.org_id
    LEFT JOIN users u ON u.id = k.user_id
    WHERE k.key_hash = ${keyHash}::bytea AND k.revoked_at IS NULL`);
  const row = rows[0];
  if (!row) return null;
  const principal: Principal = {
    id: row.user_id ? `user:${row.user_id}` : `org:${row.org_id}`,
    orgId: row.org_id,
    orgName: row.org_name,
    tier: row.tier,
    kind: 'api_key',
    ...(row.user_id ? { userId: row.user_id, userName: row.user_name ?? undefined } : {}),
  };
  return { principal, keyId: row.key_id };
}

/** Record that a key was used; a write at most once a minute per key, whichever instance served it. */
export async function touchApiKey(db: Queryable, keyId: string, now: Date): Promise<void> {
  await db.query(sql`
    UPDATE api_keys SET last_used_at = ${now}::timestamptz
    WHERE id = ${keyId}::uuid AND (last_used_at IS NULL OR last_used_at < ${now}::timestamptz - interval '1 minute')`);
}

export async function findUser(db: Queryable, idOrName: string, orgId?: string): Promise<{ id: string; org_id: string; name: string } | null> {
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrName);
  const rows = await db.query<{ id: string; org_id: string; name: string }>(
    isUuid
      ? sql`SELECT id::text, org_id::text, name FROM users WHERE id = ${idOrName}::uuid`
      : sql`SELECT id::text, org_id::text, name FROM users WHERE name = ${idOrName}::text AND (${orgId ?? null}::uuid IS NULL OR org_id = ${orgId ?? null}::uuid) ORDER BY created_at LIMIT 1`,
  );
  return rows[0] ?? null;
}

/** Link an external issuer's subject to a user (sign-in through an external OpenID Connect provider). */
export async function linkIdentity(db: Queryable, input: { issuer: string; subject: string; userId: string }): Promise<void> {
  await db.query(sql`
    INSERT INTO user_identities (issuer, subject, user_id) VALUES (${input.issuer}::text, ${input.subject}::text, ${input.userId}::uuid)
    ON CONFLICT (issuer, subject) DO UPDATE SET user_id = EXCLUDED.user_id`);
}

/** A stable UUID derived from a digest (ids for principals that have no row: test tokens, unlinked identities). */
export function derivedUuid(digest: Buffer): string {
  const h = digest.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The principal of a verified OAuth identity that names one of our users: the user (and the
 * standing of their organization) the token names, or null when it names none.
 */
export async function linkedPrincipal(db: Queryable, identity: VerifiedIdentity): Promise<Principal | null> {
  const where = identity.builtIn
    ? /^[0-9a-f-]{36}$/i.test(identity.subject)
      ? sql`u.id = ${identity.subject}::uuid`
      : null
    : sql`u.id = (SELECT user_id FROM user_identities WHERE issuer = ${identity.issuer}::text AND subject = ${identity.subject}::text)`;
  const rows = where
    ? await db.query<{ user_id: string; user_name: string; org_id: string; org_name: string; tier: Tier }>(sql`
        SELECT u.id::text AS user_id, u.name AS user_name, o.id::text AS org_id, o.name AS org_name, o.tier
        FROM users u JOIN organizations o ON o.id = u.org_id WHERE ${where}`)
    : [];
  const row = rows[0];
  if (!row) return null;
  return { id: `user:${row.user_id}`, orgId: row.org_id, orgName: row.org_name, tier: row.tier, kind: 'oauth', userId: row.user_id, userName: row.user_name };
}

/**
 * An external identity linked to no user is authenticated but has no standing: tier `public`
 * under an organization of its own, so member operations answer 403. (A built-in token naming no
 * user gets no principal: a deleted user's tokens stop working.)
 */
export function unlinkedPrincipal(identity: VerifiedIdentity): Principal {
  const orgId = derivedUuid(hashKey(`${identity.issuer}\n${identity.subject}`));
  const name = identity.name ?? identity.email ?? identity.subject;
  return { id: `oidc:${orgId}`, orgId, orgName: name, tier: 'public', kind: 'oauth', userName: name };
}
