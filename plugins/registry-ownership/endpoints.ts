import * as v from 'valibot';
import { defineEndpoint, type EndpointDefinition } from '../../core/endpoint.ts';
import { ProtocolError } from '../../core/errors.ts';
import { domainSchema } from '../../lib/domain.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { RateLimiterPort } from '../../core/ports/rate-limit.ts';
import type { Logger } from '../../core/log.ts';
import { checkProof, matchesAny, newNonce, proofLocations, type ProofMethod } from './proof.ts';
import {
  claimChallenge,
  closeChallenge,
  expireChallenge,
  issueChallenge,
  lastChallenge,
  latestProof,
  recordProof,
  supersededHashes,
  type ChallengeRow,
} from './store.ts';
import { DAY_MS } from './policy.ts';
import * as r from '../../lib/response-schemas.ts';

export interface OwnershipDeps {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  crawler: CrawlerPort;
  limiter: RateLimiterPort | undefined;
  logger: Logger;
  namespace: string;
  settings: {
    mode: 'required' | 'off';
    nonceTtlSeconds: number;
    reproveAfterDays: number;
    origin: string;
    verifyLimit: { limit: number; windowSeconds: number };
  };
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
const AGAIN = 'Request a new nonce with POST /api/ownership/challenge.';

/** Why the caller's last nonce cannot be verified, in words (nothing live to claim). */
function notLive(domain: string, last: ChallengeRow | undefined): ProtocolError {
  if (!last) {
    return new ProtocolError('NO_CHALLENGE', `Your organization has no ownership challenge for ${domain}. ${AGAIN}`, {
      status: 409,
      details: { domain, challenge: null },
    });
  }
  const challenge = { status: last.status, issued_at: iso(last.issued_at), expires_at: iso(last.expires_at), closed_at: iso(last.closed_at) };
  if (last.status === 'expired') {
    return new ProtocolError(
      'CHALLENGE_EXPIRED',
      `The nonce issued for ${domain} at ${challenge.issued_at} expired at ${challenge.expires_at} (nonces live 15 minutes at most). ${AGAIN}`,
      {
        status: 410,
        details: { domain, challenge },
      },
    );
  }
  const what: Record<string, string> = {
    consumed: `was already used: it proved control at ${challenge.closed_at} (a nonce is single use)`,
    invalidated: `was invalidated by a failed verification at ${challenge.closed_at} (${last.failure_message ?? last.failure})`,
    verifying: 'is being verified by another request right now',
    superseded: 'was superseded by a newer one',
  };
  return new ProtocolError('NO_CHALLENGE', `Your last nonce for ${domain} ${what[last.status] ?? `is ${last.status}`}. ${AGAIN}`, {
    status: 409,
    details: { domain, challenge: { ...challenge, ...(last.failure ? { failure: last.failure } : {}) } },
  });
}

export function ownershipEndpoints(deps: OwnershipDeps): EndpointDefinition[] {
  const { db, clock, settings } = deps;
  const tags = ['Ownership'];
  const domainBody = v.object({ domain: domainSchema() });

  return [
    defineEndpoint({
      method: 'POST',
      path: '/api/ownership/challenge',
      tool: 'ownership_challenge',
      success: {
        schema: r.obj({
          domain: r.str,
          nonce: r.str,
          expires_at: r.time,
          dns: r.obj({ name: r.str, type: r.str, value: r.str }),
          http: r.obj({ url: r.str, body: r.str }),
        }),
      },
      summary: 'Issue a nonce for proving control of a domain (single use, 15 minutes; supersedes an earlier one)',
      description:
        'Publish the nonce as a TXT record at `dns.name` or as the body of `http.url`, then call POST /api/ownership/verify. Only a hash of the nonce is stored.',
      tags,
      auth: 'required',
      tier: 'member',
      body: domainBody,
      rateLimits: [{ name: 'ownership.challenge', per: 'principal', limit: 30, windowSeconds: 3600 }],
      async handler({ body, principal }) {
        const nonce = newNonce();
        const now = clock.now();
        const expires = await db.transaction((tx) =>
          issueChallenge(tx, { id: deps.ids.uuid7(), orgId: principal!.orgId, domain: body.domain, nonce, now, ttlSeconds: settings.nonceTtlSeconds }),
        );
        const where = proofLocations(body.domain, deps.namespace, settings.origin);
        return {
          domain: body.domain,
          nonce,
          expires_at: expires.toISOString(),
          dns: { name: where.dnsName, type: 'TXT', value: nonce },
          http: { url: where.httpUrl, body: nonce },
        };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/api/ownership/verify',
      tool: 'verify_ownership',
      success: { schema: r.obj({ verified: r.bool, domain: r.str, method: r.str, proven_at: r.time, valid_until: r.time }) },
      summary: 'Verify the published nonce: success records a proof and consumes the nonce, failure invalidates it',
      tags,
      auth: 'required',
      body: v.object({ domain: domainSchema(), method: v.picklist(['dns', 'http'], 'must be dns or http') }),
      errors: [409, 410, 422, 429],
      async handler({ body, principal }) {
        const orgId = principal!.orgId;
        const { domain } = body;
        const method: ProofMethod = body.method;
        // Per organization and domain, so guessing cannot be spread over keys; a refused attempt leaves the nonce alive.
        const decision = await deps.limiter?.consume(`ownership.verify:${orgId}:${domain}`, settings.verifyLimit.limit, settings.verifyLimit.windowSeconds);
        if (decision && !decision.allowed) {
          throw new ProtocolError(
            'RATE_LIMITED',
            `At most ${settings.verifyLimit.limit} verification attempts per ${settings.verifyLimit.windowSeconds} s for one domain; retry in ${decision.retryAfter} s`,
            { retryAfter: decision.retryAfter },
          );
        }

        const now = clock.now();
        const claimed = await claimChallenge(db, orgId, domain, method, now);
        if (!claimed) {
          const expired = await expireChallenge(db, orgId, domain, now);
          throw notLive(domain, expired ?? (await lastChallenge(db, orgId, domain)));
        }

        let check: Awaited<ReturnType<typeof checkProof>>;
        try {
          check = await checkProof(deps.crawler, method, domain, claimed.nonce_hash, { namespace: deps.namespace, origin: settings.origin });
        } catch (error) {
          await closeChallenge(db, claimed.id, {
            status: 'invalidated',
            now: clock.now(),
            failure: 'internal_error',
            message: 'the lookup failed unexpectedly',
          });
          throw error;
        }

        const done = clock.now();
        if (check.found) {
          await db.transaction(async (tx) => {
            await closeChallenge(tx, claimed.id, { status: 'consumed', now: done });
            await recordProof(tx, orgId, domain, method, done);
          });
          deps.logger.info({ org: orgId, domain, method }, 'ownership proven');
          return {
            verified: true,
            domain,
            method,
            proven_at: done.toISOString(),
            valid_until: new Date(done.getTime() + settings.reproveAfterDays * DAY_MS).toISOString(),
          };
        }

        // A common slip: publishing the nonce of an earlier, superseded challenge.
        const outdated =
          check.candidates.length > 0 && matchesAny(check.candidates, await supersededHashes(db, orgId, domain, new Date(now.getTime() - DAY_MS)));
        const message = `${check.message}${outdated ? ' (it holds an earlier nonce of yours that a newer challenge superseded)' : ''}`;
        await closeChallenge(db, claimed.id, { status: 'invalidated', now: done, failure: check.reason, message });
        throw new ProtocolError('OWNERSHIP_NOT_VERIFIED', `Verification of ${domain} by ${method} failed: ${message}. The nonce is now invalid. ${AGAIN}`, {
          status: 422,
          details: { domain, method, ...check.details, ...(outdated ? { outdated_nonce: true } : {}) },
          extra: { reason: check.reason },
        });
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/api/ownership/status',
      tool: 'ownership_status',
      success: {
        schema: r.obj({
          domain: r.str,
          proof_required: r.bool,
          proof: r.nul(r.obj({ method: r.str, proven_at: r.time, valid_until: r.time, current: r.bool })),
          challenge: r.nul(r.obj({ status: r.str, issued_at: r.nul(r.time), expires_at: r.nul(r.time), closed_at: r.nul(r.time) })),
        }),
      },
      summary: "The caller's organization's proof and latest challenge for a domain",
      tags,
      auth: 'required',
      query: domainBody,
      async handler({ query, principal }) {
        const orgId = principal!.orgId;
        const now = clock.now();
        const [proof, last] = await Promise.all([latestProof(db, orgId, query.domain), lastChallenge(db, orgId, query.domain)]);
        const validUntil = proof ? new Date(proof.proven_at.getTime() + settings.reproveAfterDays * DAY_MS) : null;
        const live = last?.status === 'issued' && new Date(last.expires_at).getTime() > now.getTime();
        return {
          domain: query.domain,
          proof_required: settings.mode === 'required',
          proof: proof
            ? {
                method: proof.method,
                proven_at: proof.proven_at.toISOString(),
                valid_until: validUntil!.toISOString(),
                current: validUntil!.getTime() >= now.getTime(),
              }
            : null,
          challenge: last
            ? {
                status: last.status === 'issued' && !live ? 'expired' : last.status,
                issued_at: iso(last.issued_at),
                expires_at: iso(last.expires_at),
                closed_at: iso(last.closed_at),
                ...(last.method ? { method: last.method } : {}),
                ...(last.failure ? { failure: last.failure, failure_message: last.failure_message } : {}),
              }
            : null,
        };
      },
    }),
  ];
}
