import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { DomainProof } from '../../core/ports/ownership.ts';

/** Only this hash of a nonce is stored; the nonce itself is shown once, to its requester. */
export const hashNonce = (nonce: string) => new Bun.CryptoHasher('sha256').update(nonce).digest() as Buffer;

export type ChallengeStatus = 'issued' | 'verifying' | 'consumed' | 'invalidated' | 'superseded' | 'expired';

export interface ChallengeRow {
  id: string;
  status: ChallengeStatus;
  method: string | null;
  nonce_hash: Uint8Array;
  issued_at: Date | string;
  expires_at: Date | string;
  closed_at: Date | string | null;
  failure: string | null;
  failure_message: string | null;
}

const COLUMNS = sql`id::text, status, method, nonce_hash, issued_at, expires_at, closed_at, failure, failure_message`;

/** Issue a nonce for (org, domain); a live one of the pair is superseded. */
export async function issueChallenge(tx: Queryable, input: { id: string; orgId: string; domain: string; nonce: string; now: Date; ttlSeconds: number }) {
  // Two requests for one pair at once must not both insert a live row (unique partial index).
  await tx.query(sql`SELECT pg_advisory_xact_lock(hashtext(${`ownership:${input.orgId}:${input.domain}`}::text))`);
  await tx.query(sql`UPDATE ownership_challenges SET status = 'superseded', closed_at = ${input.now}::timestamptz
    WHERE org_id = ${input.orgId}::uuid AND domain = ${input.domain}::text AND status = 'issued'`);
  const expires = new Date(input.now.getTime() + input.ttlSeconds * 1000);
  await tx.query(sql`INSERT INTO ownership_challenges (id, org_id, domain, nonce_hash, issued_at, expires_at, status)
    VALUES (${input.id}::uuid, ${input.orgId}::uuid, ${input.domain}::text, ${hashNonce(input.nonce)}::bytea, ${input.now}::timestamptz,
            ${expires}::timestamptz, 'issued')`);
  return expires;
}

/**
 * Claim the live, unexpired nonce of (org, domain) for one verification: issued -> verifying in
 * one statement, so of two concurrent verifications exactly one gets it. Whatever the lookup
 * finds, the nonce is never live again (spec: consumed on success, invalidated on failure).
 */
export async function claimChallenge(db: Queryable, orgId: string, domain: string, method: string, now: Date): Promise<ChallengeRow | undefined> {
  const [row] = await db.query<ChallengeRow>(sql`UPDATE ownership_challenges SET status = 'verifying', method = ${method}::text
    WHERE org_id = ${orgId}::uuid AND domain = ${domain}::text AND status = 'issued' AND expires_at > ${now}::timestamptz
    RETURNING ${COLUMNS}`);
  return row;
}

/** Mark the pair's live nonce expired when its time has passed; returns it if so. */
export async function expireChallenge(db: Queryable, orgId: string, domain: string, now: Date): Promise<ChallengeRow | undefined> {
  const [row] = await db.query<ChallengeRow>(sql`UPDATE ownership_challenges SET status = 'expired', closed_at = expires_at
    WHERE org_id = ${orgId}::uuid AND domain = ${domain}::text AND status = 'issued' AND expires_at <= ${now}::timestamptz
    RETURNING ${COLUMNS}`);
  return row;
}

/** The most recent challenge of (org, domain), whatever became of it. */
export async function lastChallenge(db: Queryable, orgId: string, domain: string): Promise<ChallengeRow | undefined> {
  const [row] = await db.query<ChallengeRow>(sql`SELECT ${COLUMNS} FROM ownership_challenges
    WHERE org_id = ${orgId}::uuid AND domain = ${domain}::text ORDER BY issued_at DESC, id DESC LIMIT 1`);
  return row;
}

/** Hashes of the pair's nonces superseded since `since` (to tell a caller it published an old one). */
export async function supersededHashes(db: Queryable, orgId: string, domain: string, since: Date): Promise<Uint8Array[]> {
  const rows = await db.query<{ nonce_hash: Uint8Array }>(sql`SELECT nonce_hash FROM ownership_challenges
    WHERE org_id = ${orgId}::uuid AND domain = ${domain}::text AND status = 'superseded' AND issued_at >= ${since}::timestamptz`);
  return rows.map((r) => r.nonce_hash);
}

/** End a claimed verification. */
export async function closeChallenge(
  tx: Queryable,
  id: string,
  outcome: { status: 'consumed' | 'invalidated'; now: Date; failure?: string; message?: string },
): Promise<void> {
  await tx.query(sql`UPDATE ownership_challenges
    SET status = ${outcome.status}::text, closed_at = ${outcome.now}::timestamptz, failure = ${outcome.failure ?? null}::text,
        failure_message = ${outcome.message ?? null}::text
    WHERE id = ${id}::uuid AND status = 'verifying'`);
}

export interface ProofRow {
  method: string;
  proven_at: Date;
}

export async function recordProof(tx: Queryable, orgId: string, domain: string, method: string, now: Date): Promise<void> {
  await tx.query(sql`INSERT INTO ownership_proofs (org_id, domain, method, proven_at)
    VALUES (${orgId}::uuid, ${domain}::text, ${method}::text, ${now}::timestamptz)
    ON CONFLICT (org_id, domain) DO UPDATE SET method = EXCLUDED.method, proven_at = EXCLUDED.proven_at`);
}

/** The organization's latest proof for the domain (proofs of other organizations never count). */
export async function latestProof(db: Queryable, orgId: string, domain: string): Promise<ProofRow | null> {
  const [row] = await db.query<{ method: string; proven_at: Date | string }>(sql`SELECT method, proven_at FROM ownership_proofs
    WHERE org_id = ${orgId}::uuid AND domain = ${domain}::text`);
  return row ? { method: row.method, proven_at: new Date(row.proven_at) } : null;
}

/** Every organization's proofs of any of `domains` made at or after `since`. */
export async function proofsSince(db: Queryable, domains: readonly string[], since: Date): Promise<DomainProof[]> {
  if (!domains.length) return [];
  const rows = await db.query<{ domain: string; org_id: string; method: 'dns' | 'http'; proven_at: Date | string }>(sql`
    SELECT domain, org_id::text, method, proven_at FROM ownership_proofs
    WHERE domain = ANY(${domains}::text[]) AND proven_at >= ${since}::timestamptz ORDER BY domain, proven_at DESC`);
  return rows.map((r) => ({ domain: r.domain, orgId: r.org_id, method: r.method, provenAt: new Date(r.proven_at) }));
}

/** Delete challenges whose lifetime ended before `before` (all are dead by then); proofs are kept. */
export async function pruneChallenges(db: Queryable, before: Date): Promise<number> {
  const rows = await db.query(sql`DELETE FROM ownership_challenges WHERE expires_at < ${before}::timestamptz RETURNING 1 AS x`);
  return rows.length;
}
