import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Endpoints, defineEndpoint } from '../../core/endpoint.ts';
import { ProtocolError } from '../../core/errors.ts';
import { domainSchema } from '../../core/domain.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Auth } from '../../core/ports/auth.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { RateLimiter } from '../../core/ports/rate-limit.ts';
import { Ownership, type OwnershipPort } from '../../core/ports/ownership.ts';
import { closeChallenge, issueChallenge, latestProof, liveChallenge, recordProof } from './store.ts';
import { checkProof, newNonce } from './proof.ts';

const options = v.object({
  /** `required`: new community entries and revisions need a proof of domain control; `off`: no checks (local trials). */
  mode: v.optional(v.picklist(['required', 'off'], 'must be required or off'), 'required'),
  /** Nonce lifetime (the spec: within 15 minutes). */
  nonceTtlSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60), v.maxValue(900)), 900),
  /** Rolling window after which an organization must prove control again. */
  reproveAfterDays: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3650)), 90),
  /** Where the HTTP challenge is fetched; tests point it at a loopback port. */
  origin: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\/\{domain\}(:\d+)?$/, 'must look like https://{domain}')), 'https://{domain}'),
});

const DAY = 86_400_000;

/**
 * Proof of domain control for community saves: server-issued nonces (single use, scoped to the
 * organization and domain, 15 minutes), verified by DNS TXT at `_{ns}-owner.{domain}` or by
 * `https://{domain}/.well-known/{ns}-ownership.txt`; saves consult the proof through the Ownership port.
 */
export default definePlugin({
  name: 'registry-ownership',
  provides: [Ownership],
  requires: [Database, Auth, Crawler],
  optional: [RateLimiter],
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  register(ctx) {
    const o = ctx.options;
    const db = ctx.get(Database);
    const clock = ctx.get(Clock);
    const ids = ctx.get(Ids);
    const ns = ctx.config.protocol.namespace;

    const port: OwnershipPort = {
      async assertProven(tx, principal, domain, action) {
        if (o.mode === 'off' || principal.tier === 'admin') return;
        const proven = await latestProof(tx, principal.orgId, domain);
        const fresh = proven && clock.now().getTime() - proven.getTime() <= o.reproveAfterDays * DAY;
        if (fresh) return;
        throw new ProtocolError(
          'OWNERSHIP_PROOF_REQUIRED',
          proven
            ? `Your proof of control of ${domain} is older than ${o.reproveAfterDays} days; prove it again to ${action === 'create' ? 'create' : 'revise'} this entry`
            : `Prove control of ${domain} before ${action === 'create' ? 'creating' : 'revising'} its entry`,
          { status: 403, suggestion: 'POST /api/ownership/challenge {domain}, publish the nonce, then POST /api/ownership/verify {domain, method}' },
        );
      },
    };
    ctx.provide(Ownership, port);

    const tags = ['Ownership'];
    ctx.get(Endpoints).add(
      defineEndpoint({
        method: 'POST',
        path: '/api/ownership/challenge',
        summary: 'Issue a nonce proving control of a domain (single use, 15 minutes)',
        tags,
        auth: 'required',
        tier: 'member',
        body: v.object({ domain: domainSchema() }),
        rateLimits: [{ name: 'ownership.challenge', per: 'principal', limit: 30, windowSeconds: 3600 }],
        async handler({ body, principal }) {
          const nonce = newNonce();
          const now = clock.now();
          const expires = await db.transaction((tx) =>
            issueChallenge(tx, { id: ids.uuid7(), orgId: principal!.orgId, domain: body.domain, nonce, now, ttlSeconds: o.nonceTtlSeconds }),
          );
          return {
            domain: body.domain,
            nonce,
            expires_at: expires.toISOString(),
            dns: { name: `_${ns}-owner.${body.domain}`, type: 'TXT', value: nonce },
            http: { url: `https://${body.domain}/.well-known/${ns}-ownership.txt`, body: nonce },
          };
        },
      }),
      defineEndpoint({
        method: 'POST',
        path: '/api/ownership/verify',
        summary: 'Verify the published nonce; success records the proof, failure invalidates the nonce',
        tags,
        auth: 'required',
        tier: 'member',
        body: v.object({ domain: domainSchema(), method: v.picklist(['dns', 'http'], 'must be dns or http') }),
        errors: [409],
        rateLimits: [{ name: 'ownership.verify', per: 'principal', limit: 10, windowSeconds: 3600 }],
        async handler({ body, principal }) {
          const crawler = ctx.get(Crawler);
          const orgId = principal!.orgId;
          const now = clock.now();
          return db.transaction(async (tx) => {
            const challenge = await liveChallenge(tx, orgId, body.domain);
            if (!challenge) throw new ProtocolError('NO_CHALLENGE', `No live nonce for ${body.domain}: request one with POST /api/ownership/challenge`, { status: 409 });
            if (new Date(challenge.expires_at).getTime() <= now.getTime()) {
              await closeChallenge(tx, challenge.id, 'invalidated', body.method, 'expired');
              return { verified: false, domain: body.domain, reason: 'The nonce expired; request a new one' };
            }
            const check = await checkProof(crawler, body.method, body.domain, challenge.nonce_hash, { namespace: ns, origin: o.origin });
            if (!check.found) {
              // A failed verification kills the nonce: guessing is not possible.
              await closeChallenge(tx, challenge.id, 'invalidated', body.method, check.reason);
              return { verified: false, domain: body.domain, reason: `${check.reason}; the nonce is now invalid, request a new one` };
            }
            await closeChallenge(tx, challenge.id, 'consumed', body.method);
            await recordProof(tx, orgId, body.domain, body.method, now);
            const validUntil = new Date(now.getTime() + o.reproveAfterDays * DAY);
            return { verified: true, domain: body.domain, method: body.method, valid_until: validUntil.toISOString() };
          });
        },
      }),
    );
  },
});
