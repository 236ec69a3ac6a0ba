import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import { findUnsafeInput } from '../../core/validation.ts';

/** Text Postgres cannot hold or compare (NUL, lone surrogates) matches nothing: answered before any query. */
const unstorable = (...values: string[]) => values.some((x) => findUnsafeInput(x) !== null);

/** SHA-256 of a secret (codes, refresh tokens, client secrets): 256-bit random values, so a fast hash is enough. */
export function digest(value: string): Buffer {
  return new Bun.CryptoHasher('sha256').update(value).digest() as Buffer;
}

/** 256 random bits, base64url. */
export function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID.test(s);

export interface Client {
  client_id: string;
  secret_hash: Buffer | Uint8Array | null;
  client_name: string | null;
  redirect_uris: string[];
  token_endpoint_auth_method: 'none' | 'client_secret_basic' | 'client_secret_post';
  grant_types: string[];
  scope: string | null;
}

export async function insertClient(db: Queryable, c: Omit<Client, 'secret_hash'> & { secret: string | null; now: Date }): Promise<void> {
  await db.query(sql`
    INSERT INTO oauth_clients (client_id, secret_hash, client_name, redirect_uris, token_endpoint_auth_method, grant_types, scope, created_at)
    VALUES (${c.client_id}::text, ${c.secret ? digest(c.secret) : null}::bytea, ${c.client_name}::text, ${c.redirect_uris}::text[],
      ${c.token_endpoint_auth_method}::text, ${c.grant_types}::text[], ${c.scope}::text, ${c.now}::timestamptz)`);
}

export async function findClient(db: Queryable, clientId: string): Promise<Client | null> {
  if (clientId.length > 200 || unstorable(clientId)) return null;
  const [row] = await db.query<Client>(sql`
    SELECT client_id, secret_hash, client_name, redirect_uris, token_endpoint_auth_method, grant_types, scope FROM oauth_clients WHERE client_id = ${clientId}::text`);
  return row ?? null;
}

/** The sign-in name of a user, found by that name (any case) or by user id. */
export async function findLogin(db: Queryable, loginOrUserId: string): Promise<{ userId: string; login: string } | null> {
  if (unstorable(loginOrUserId)) return null;
  const [row] = await db.query<{ userId: string; login: string }>(
    sql`SELECT user_id::text AS "userId", login FROM oauth_passwords WHERE lower(login) = lower(${loginOrUserId}::text) OR user_id::text = ${loginOrUserId}::text`,
  );
  return row ?? null;
}

/** Set (or replace) a user's sign-in name and password (argon2id through Bun.password). */
export async function setPassword(db: Queryable, input: { userId: string; login: string; password: string; now: Date }): Promise<void> {
  const hash = await Bun.password.hash(input.password, { algorithm: 'argon2id' });
  await db.query(sql`
    INSERT INTO oauth_passwords (user_id, login, password_hash, updated_at) VALUES (${input.userId}::uuid, ${input.login}::text, ${hash}::text, ${input.now}::timestamptz)
    ON CONFLICT (user_id) DO UPDATE SET login = EXCLUDED.login, password_hash = EXCLUDED.password_hash, updated_at = EXCLUDED.updated_at`);
}

/** A hash of nothing anyone knows: unknown logins are verified against it, so timing does not tell them apart. */
const DECOY = Bun.password.hash(randomToken(), { algorithm: 'argon2id' });

/** The user id whose login and password match, or null. */
export async function checkPassword(db: Queryable, login: string, password: string): Promise<string | null> {
  if (login.length > 200 || password.length > 1000 || unstorable(login, password)) return null;
  const [row] = await db.query<{ user_id: string; password_hash: string }>(sql`
    SELECT user_id::text, password_hash FROM oauth_passwords WHERE lower(login) = lower(${login}::text)`);
  const ok = await Bun.password.verify(password, row?.password_hash ?? (await DECOY));
  return ok && row ? row.user_id : null;
}

export async function insertCode(
  db: Queryable,
  c: {
    code: string;
    clientId: string;
    userId: string;
    redirectUri: string;
    challenge: string;
    scope: string | null;
    resources: string[] | null;
    expiresAt: Date;
  },
): Promise<void> {
  await db.query(sql`
    INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, code_challenge, scope, resources, expires_at)
    VALUES (${digest(c.code)}::bytea, ${c.clientId}::text, ${c.userId}::uuid, ${c.redirectUri}::text, ${c.challenge}::text, ${c.scope}::text,
      ${c.resources}::text[], ${c.expiresAt}::timestamptz)`);
}

export async function createGrant(
  db: Queryable,
  g: { id: string; clientId: string; userId: string; scope: string | null; resources: string[]; now: Date },
): Promise<void> {
  await db.query(sql`
    INSERT INTO oauth_grants (id, client_id, user_id, scope, resources, created_at)
    VALUES (${g.id}::uuid, ${g.clientId}::text, ${g.userId}::uuid, ${g.scope}::text, ${g.resources}::text[], ${g.now}::timestamptz)`);
}

export async function revokeGrant(db: Queryable, grantId: string, reason: string, now: Date): Promise<void> {
  if (!isUuid(grantId)) return;
  await db.query(
    sql`UPDATE oauth_grants SET revoked_at = ${now}::timestamptz, revoked_reason = ${reason}::text WHERE id = ${grantId}::uuid AND revoked_at IS NULL`,
  );
}

export async function grantRevoked(db: Queryable, grantId: string): Promise<boolean> {
  if (!isUuid(grantId)) return true;
  const [row] = await db.query<{ revoked: boolean }>(sql`SELECT revoked_at IS NOT NULL AS revoked FROM oauth_grants WHERE id = ${grantId}::uuid`);
  return row?.revoked ?? true;
}

export async function insertRefreshToken(db: Queryable, r: { token: string; grantId: string; expiresAt: Date; now: Date }): Promise<void> {
  await db.query(sql`
    INSERT INTO oauth_refresh_tokens (token_hash, grant_id, expires_at, created_at)
    VALUES (${digest(r.token)}::bytea, ${r.grantId}::uuid, ${r.expiresAt}::timestamptz, ${r.now}::timestamptz)`);
}
