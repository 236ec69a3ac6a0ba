import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';

export const hashNonce = (nonce: string) => new Bun.CryptoHasher('sha256').update(nonce).digest() as Buffer;

export interface LiveChallenge {
  id: string;
  nonce_hash: Buffer | Uint8Array;
  expires_at: Date | string;
}

/** Issue a nonce for (org, domain), superseding any live one. */
export async function issueChallenge(tx: Queryable, input: { id: string; orgId: string; domain: string; nonce: string; now: Date; ttlSeconds: number }) {
  await tx.query(sql`UPDATE ownership_challenges SET status = 'superseded'
    WHERE org_id = ${input.orgId}::uuid AND domain = ${input.domain}::text AND status = 'issued'`);
  const expires = new Date(input.now.getTime() + input.ttlSeconds * 1000);
  await tx.query(sql`INSERT INTO ownership_challenges (id, org_id, domain, nonce_hash, issued_at, expires_at, status)
    VALUES (${input.id}::uuid, ${input.orgId}::uuid, ${input.domain}::text, ${hashNonce(input.nonce)}::bytea, ${input.now}::timestamptz,
            ${expires}::timestamptz, 'issued')`);
  return expires;
}

/** The live nonce of (org, domain), locked for the verification that consumes or invalidates it. */
export async function liveChallenge(tx: Queryable, orgId: string, domain: string): Promise<LiveChallenge | undefined> {
  const [row] = await tx.query<LiveChallenge>(sql`SELECT id::text, nonce_hash, expires_at FROM ownership_challenges
    WHERE org_id = ${orgId}::uuid AND domain = ${domain}::text AND status = 'issued' FOR UPDATE`);
  return row;
}

export async function closeChallenge(tx: Queryable, id: string, status: 'consumed' | 'invalidated', method: string, failure?: string) {
  await tx.query(sql`UPDATE ownership_challenges SET status = ${status}::text, method = ${method}::text, failure = ${failure ?? null}::text
    WHERE id = ${id}::uuid`);
}

export async function recordProof(tx: Queryable, orgId: string, domain: string, method: string, now: Date) {
  await tx.query(sql`INSERT INTO ownership_proofs (org_id, domain, method, proven_at)
    VALUES (${orgId}::uuid, ${domain}::text, ${method}::text, ${now}::timestamptz)
    ON CONFLICT (org_id, domain) DO UPDATE SET method = EXCLUDED.method, proven_at = EXCLUDED.proven_at`);
}

export async function latestProof(tx: Queryable, orgId: string, domain: string): Promise<Date | null> {
  const [row] = await tx.query<{ proven_at: Date | string }>(sql`SELECT proven_at FROM ownership_proofs
    WHERE org_id = ${orgId}::uuid AND domain = ${domain}::text`);
  return row ? new Date(row.proven_at) : null;
}
