import { toUnicode } from 'tr46';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { confusableSkeleton } from '../../lib/confusables.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { OwnershipAction, OwnershipPort } from '../../core/ports/ownership.ts';
import { latestProof, proofsSince } from './store.ts';

export const DAY_MS = 86_400_000;

export interface PolicyOptions {
  mode: 'required' | 'off';
  reproveAfterDays: number;
  /** Normalized (ASCII) domains whose look-alikes are refused. */
  protectedDomains: readonly string[];
  clock: ClockPort;
  /** Where currentProofs reads (saves pass their own transaction to the assertions). */
  db: Queryable;
}

const VERB: Record<OwnershipAction, string> = { create: 'creating', revise: 'revising', rollback: 'rolling back' };

/** `xn--80ak6aa92e.com (аррӏе.com)` for internationalized names, the name alone otherwise. */
function shown(domain: string): string {
  if (!domain.includes('xn--')) return domain;
  return `${domain} (${toUnicode(domain, { useSTD3ASCIIRules: true }).domain})`;
}

export function proofRequired(domain: string, action: OwnershipAction, message: string, details: Record<string, unknown>): ProtocolError {
  return new ProtocolError(
    'OWNERSHIP_PROOF_REQUIRED',
    `${message} Prove it before ${VERB[action]} this entry: POST /api/ownership/challenge {"domain":"${domain}"}, publish the nonce as a DNS TXT record or an HTTPS file, then POST /api/ownership/verify {"domain":"${domain}","method":"dns"|"http"}.`,
    { status: 403, details, suggestion: 'POST /api/ownership/challenge' },
  );
}

/** The Ownership port: proof of control within a rolling window, and look-alike refusal for new entries. */
export function ownershipPolicy(o: PolicyOptions): OwnershipPort {
  const protectedBySkeleton = new Map<string, string[]>();
  for (const d of o.protectedDomains) {
    const skeleton = confusableSkeleton(d);
    protectedBySkeleton.set(skeleton, [...(protectedBySkeleton.get(skeleton) ?? []), d]);
  }
  const windowMs = o.reproveAfterDays * DAY_MS;

  return {
    async assertProven(tx, principal, domain, action) {
      if (o.mode === 'off' || principal.tier === 'admin') return;
      const proof = await latestProof(tx, principal.orgId, domain);
      if (proof && o.clock.now().getTime() - proof.proven_at.getTime() <= windowMs) return;
      const details = { domain, reprove_after_days: o.reproveAfterDays, ...(proof ? { proven_at: proof.proven_at.toISOString() } : {}) };
      throw proofRequired(
        domain,
        action,
        proof
          ? `Your organization's proof of control of ${domain} (${proof.proven_at.toISOString()}) is older than ${o.reproveAfterDays} days.`
          : `Your organization has not proven control of ${domain}.`,
        details,
      );
    },

    async assertDistinct(tx, principal, domain, registered) {
      // An administrator is the human review the spec asks for: they may create a look-alike.
      if (principal.tier === 'admin') return;
      const skeleton = confusableSkeleton(domain);
      const guarded = (protectedBySkeleton.get(skeleton) ?? []).filter((d) => d !== domain);
      let lookalikeOf: string | undefined = guarded[0];
      let kind: 'protected' | 'registered' = 'protected';
      if (!lookalikeOf) {
        // Look-alike creations wait for each other, so of two saved at once the second sees the first.
        await tx.query(sql`SELECT pg_advisory_xact_lock(hashtext(${`skeleton:${skeleton}`}::text))`);
        lookalikeOf = (await registered(skeleton))[0];
        kind = 'registered';
      }
      if (!lookalikeOf) return;
      throw new ProtocolError(
        'CONFUSABLE_DOMAIN',
        `${shown(domain)} can be mistaken for ${shown(lookalikeOf)}, which is ${kind === 'protected' ? 'a protected domain' : 'already registered'}; new entries for look-alike domains are refused. If it is a genuinely different domain, ask a registry administrator to create the entry.`,
        { status: 409, details: { domain, lookalike_of: lookalikeOf, reason: kind, skeleton } },
      );
    },

    currentProofs(domains) {
      return proofsSince(o.db, domains, new Date(o.clock.now().getTime() - windowMs));
    },
  };
}
