import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Endpoints } from '../../core/endpoint.ts';
import { domainSchema } from '../../lib/domain.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { RateLimiter } from '../../core/ports/rate-limit.ts';
import { Ownership } from '../../core/ports/ownership.ts';
import { ownershipEndpoints } from './endpoints.ts';
import { DAY_MS, ownershipPolicy } from './policy.ts';
import { pruneChallenges } from './store.ts';

const int = (min: number, max: number) =>
  v.pipe(
    v.number('must be an integer'),
    v.integer('must be an integer'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

const options = v.object({
  /** `required`: creating, revising or rolling back a community entry needs a current proof of domain control; `off`: no proof (local trials). */
  mode: v.optional(v.picklist(['required', 'off'], 'must be "required" or "off"'), 'required'),
  /** Nonce lifetime; the spec caps it at 15 minutes. */
  nonceTtlSeconds: v.optional(int(60, 900), 900),
  /** Rolling window after which an organization must prove control again. */
  reproveAfterDays: v.optional(int(1, 3650), 90),
  /** Domains whose look-alikes (same confusable skeleton) may never be created, registered or not. */
  protectedDomains: v.optional(v.array(domainSchema()), []),
  /** Verification attempts per organization and domain. */
  verifyLimit: v.optional(v.object({ limit: int(1, 1000), windowSeconds: int(1, 86_400) }), { limit: 10, windowSeconds: 3600 }),
  /** Where the HTTP proof is fetched; only tests change it (a loopback port). */
  origin: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\/\{domain\}(:\d+)?$/, 'must look like https://{domain}')), 'https://{domain}'),
  /** How often challenges dead for a week are deleted; 0 = never. */
  pruneIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 3_600_000),
});

/**
 * Save-time anti-abuse controls of the hosted registry: proof of domain control (server-issued
 * nonces, single use, scoped to organization and domain, 15 minutes, verified by DNS TXT at
 * `_{ns}-owner.{domain}` or `https://{domain}/.well-known/{ns}-ownership.txt` through the crawler
 * port) and refusal of look-alike domains. Community saves consult it through the Ownership port.
 */
export default definePlugin({
  name: 'registry-ownership',
  provides: [Ownership],
  deps: { db: Database, clock: Clock, ids: Ids, crawler: Crawler, endpoints: Endpoints, limiter: optional(RateLimiter) },
  env: { OWNERSHIP_PROOF: 'mode', PROTECTED_DOMAINS: { path: 'protectedDomains', type: 'csv' } },
  options,
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, clock, ids, crawler, endpoints, limiter }, kernel) {
    const o = kernel.options;
    kernel.provide(Ownership, ownershipPolicy({ mode: o.mode, reproveAfterDays: o.reproveAfterDays, protectedDomains: o.protectedDomains, clock, db }));
    endpoints.add(...ownershipEndpoints({ db, clock, ids, crawler, limiter, logger: kernel.logger, namespace: kernel.config.protocol.namespace, settings: o }));
    if (o.pruneIntervalMs) {
      kernel.scheduler.add({
        name: 'prune-challenges',
        intervalMs: o.pruneIntervalMs,
        runAtStart: false,
        run: async () => void (await pruneChallenges(db, new Date(clock.now().getTime() - 7 * DAY_MS))),
      });
    }
    return {
      start() {
        if (o.mode === 'off') kernel.logger.warn('ownership proof is off: any member may create or edit community entries of any domain');
      },
    };
  },
});
