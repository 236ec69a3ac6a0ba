import * as v from 'valibot';
import { defineEndpoint, JsonText, Reply, type EndpointDefinition, type RateLimitRule } from '../../core/endpoint.ts';
import { ProtocolError } from '../../core/errors.ts';
import { tryNormalizeDomain } from '../../lib/domain.ts';
import type { DatabasePort, Queryable } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { EventLogPort, NewEvent } from '../../core/ports/events.ts';
import type { Principal } from '../../core/ports/auth.ts';
import type { OwnershipPort } from '../../core/ports/ownership.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import { domainSchema } from '../../lib/domain.ts';
import { qInt } from '../../core/endpoint.ts';
import * as rs from '../response-schemas.ts';

const revision = rs.obj({
  revision_number: rs.int,
  editor_name: rs.str,
  edit_summary: rs.str,
  source: rs.str,
  is_rollback: rs.bool,
  rolled_back_to: rs.opt(rs.int),
  created_at: rs.time,
});
const historySchema = rs.obj({ domain: rs.str, total: rs.int, revisions: rs.arr(revision) });
const revisionRef = rs.obj({ revision_number: rs.int, edit_summary: rs.str, editor_name: rs.str, created_at: rs.time });
const diffSchema = rs.obj({
  domain: rs.str,
  from: rs.int,
  to: rs.int,
  from_revision: rs.nul(revisionRef),
  to_revision: revisionRef,
  changes: rs.arr(rs.obj({ path: rs.str, change: v.picklist(['added', 'removed', 'changed']), before: rs.opt(rs.any), after: rs.opt(rs.any) })),
  total_changes: rs.int,
  truncated: rs.bool,
});
const saveSchema = rs.obj({ success: rs.bool, message: rs.str, domain: rs.opt(rs.str), id: rs.str, revision_number: rs.opt(rs.int) });
const rollbackSchema = rs.obj({ success: rs.bool, message: rs.str, domain: rs.str, id: rs.str, revision_number: rs.int, rolled_back_to: rs.int });
import type { EntryCache } from './cache.ts';
import { MAX_CHANGES, revisionDiff } from './diff.ts';
import { findEntries, findEntry, history, rollbackEntry, saveEntry, type Entry, type RevisionTables, type SaveOutcome } from './store.ts';

export interface RevisionDeps {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  /** Absent when the deployment has no change feed. */
  events: EventLogPort | undefined;
  /** Save-time anti-abuse controls, when the deployment includes registry-ownership. */
  ownership: OwnershipPort | undefined;
  /** Per-organization burst caps on saves (brands and properties count together). */
  orgCaps: OrgSaveCaps;
  /** Homepage enrichment (brands): the SSRF-guarded crawler when deployed, where pages are fetched, how long results are reused. */
  enrich: { crawler: CrawlerPort | undefined; origin: string; ttlSeconds: number };
}

export interface OrgSaveCaps {
  perHour: number;
  perDay: number;
}

/**
 * The limits of every save-like endpoint: per caller (60 an hour), and per organization (all its
 * keys and users, brands and properties together) an hourly burst cap and a daily cap. Counters live
 * in the RateLimiter port (the database), so every instance counts together.
 */
export function saveLimits(noun: string, caps: OrgSaveCaps): RateLimitRule[] {
  return [
    { ...SAVE_LIMIT, name: `${noun}.save` },
    { name: 'org.saves.hour', per: 'organization', limit: caps.perHour, windowSeconds: 3600 },
    { name: 'org.saves.day', per: 'organization', limit: caps.perDay, windowSeconds: 86_400 },
  ];
}

/** What differs between brands and hosted properties; everything else is shared. */
export interface RevisionedResource<D, B extends { edit_summary?: string }> {
  /** `/api/brands` */
  base: string;
  tag: string;
  tables: RevisionTables;
  /** Source written by community saves. */
  saveSource: string;
  saveBody: v.GenericSchema<unknown, B>;
  /** Domain of a save body. */
  domainOf(body: B): string;
  /** Stored record for a save, given the current one (undefined on create). */
  toData(body: B, previous: D | undefined, newId: () => string): D;
  resolution(entry: Entry<D>): unknown;
  /** Documented shape of `resolution`. */
  resolutionSchema: v.GenericSchema;
  events(outcome: SaveOutcome<D>, actor: string): NewEvent[];
  saveResult(outcome: SaveOutcome<D>, domain: string): Record<string, unknown>;
}

const domainQuery = v.object({ domain: domainSchema() });
const historyQuery = v.object({ domain: domainSchema(), limit: qInt(1, 100, 20), offset: qInt(0, 1_000_000, 0) });
const diffQuery = v.object({ domain: domainSchema(), from: qInt(0, 2_147_483_647), to: qInt(1, 2_147_483_647) });
const bulkBody = v.object({
  domains: v.pipe(
    v.array(v.pipe(v.string('must be a string'), v.maxLength(512)), 'must be an array of domains'),
    v.minLength(1, 'must list at least one domain'),
    v.maxLength(100, 'accepts at most 100 domains'),
  ),
});
const rollbackParams = v.object({ domain: domainSchema() });
const rollbackBody = v.object({
  // Revisions are int4 in the database: a larger number is refused here, not by Postgres.
  to_revision: v.pipe(
    v.number('must be an integer'),
    v.integer('must be an integer'),
    v.minValue(1, 'must be at least 1'),
    v.maxValue(2_147_483_647, 'is not a revision number'),
  ),
  edit_summary: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(500))),
});

export const SAVE_LIMIT = { name: 'save', per: 'principal', limit: 60, windowSeconds: 3600 } as const;

/**
 * The endpoints every revisioned resource shares: resolve, bulk resolve, history, save and
 * rollback. Saves and rollbacks write the entry, its revision and its feed events in one transaction.
 */
export function revisionEndpoints<D, B extends { edit_summary?: string }>(r: RevisionedResource<D, B>, deps: RevisionDeps, cache: EntryCache<D>) {
  const { db } = deps;
  const tags = [r.tag];
  const noun = r.tables.noun;
  const notFound = (domain: string) => new Reply(404, { error: 'not_found', message: `No ${noun} is registered for ${domain}`, domain });
  const rateLimits = saveLimits(noun, deps.orgCaps);
  const serialized = new WeakMap<object, string>();

  const write = async (actor: string, fn: (tx: Queryable) => Promise<SaveOutcome<D>>) => {
    const outcome = await db.transaction(async (tx) => {
      const result = await fn(tx);
      const events = r.events(result, actor);
      if (events.length) await deps.events?.append(tx, events);
      return result;
    });
    // Read-your-writes on this instance without waiting for the NOTIFY round trip.
    cache.invalidate(outcome.entry.domain);
    return outcome;
  };

  const save = async (body: B, principal: Principal) => {
    const domain = r.domainOf(body);
    const outcome = await write(principal.id, (tx) =>
      saveEntry<D>(tx, r.tables, domain, (previous) => r.toData(body, previous, deps.ids.uuid7), r.saveSource, {
        principal,
        ownership: deps.ownership,
        summary: body.edit_summary ?? (noun === 'brand' ? 'Saved brand' : 'Saved properties'),
        now: deps.clock.now(),
        newId: deps.ids.uuid7,
      }),
    );
    return r.saveResult(outcome, domain);
  };

  const endpoints: EndpointDefinition[] = [
    defineEndpoint({
      method: 'GET',
      path: `${r.base}/resolve`,
      tool: `resolve_${noun}`,
      etag: true,
      success: { schema: r.resolutionSchema },
      summary: `Resolve a domain to its ${noun} record`,
      tags,
      query: domainQuery,
      errors: [404],
      async handler({ query }) {
        const entry = await cache.get(query.domain, (domain) => findEntry<D>(db, r.tables, domain));
        if (!entry) return notFound(query.domain);
        // Cached entries are immutable: serialize each one's resolution once.
        let text = serialized.get(entry);
        if (text === undefined) serialized.set(entry, (text = JSON.stringify(r.resolution(entry))));
        return new JsonText(text);
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: `${r.base}/resolve/bulk`,
      tool: `resolve_${noun}_bulk`,
      success: { schema: v.object({ results: v.record(v.string(), v.nullable(r.resolutionSchema)) }) },
      summary: 'Resolve up to 100 domains; unknown domains map to null',
      tags,
      body: bulkBody,
      rateLimits: [{ name: `${noun}.bulk`, per: 'ip', limit: 20, windowSeconds: 60 }],
      async handler({ body }) {
        const normalized = body.domains.map((d, i) => {
          const n = tryNormalizeDomain(d);
          if (!n)
            throw new ProtocolError('INVALID_REQUEST', `body.domains[${i}]: invalid domain ${JSON.stringify(d.slice(0, 100))}`, {
              field: `body.domains[${i}]`,
            });
          return n;
        });
        const found = new Map((await findEntries<D>(db, r.tables, [...new Set(normalized)])).map((e) => [e.domain, e]));
        const results: Record<string, unknown> = {};
        body.domains.forEach((d, i) => {
          const entry = found.get(normalized[i]!);
          results[d] = entry ? r.resolution(entry) : null;
        });
        return { results };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: `${r.base}/history`,
      tool: `${noun}_history`,
      success: { schema: historySchema },
      summary: `Revision history of a ${noun}, newest first`,
      tags,
      query: historyQuery,
      errors: [404],
      async handler({ query }) {
        return (await history(db, r.tables, query.domain, query.limit, query.offset)) ?? notFound(query.domain);
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: `${r.base}/diff`,
      tool: `diff_${noun}_revisions`,
      success: { schema: diffSchema },
      summary: `What changed between two revisions of a ${noun}, field by field`,
      description:
        `\`to\` defaults to the current revision and \`from\` to the revision before \`to\` (0: the empty ${noun} before the first revision). ` +
        `Each change names a leaf of the stored data by path (\`a.b[0].c\`) with its value before and after; at most ${MAX_CHANGES} changes are listed (\`truncated\`).`,
      tags,
      query: diffQuery,
      errors: [400, 404],
      async handler({ query }) {
        const d = await revisionDiff(db, r.tables, query.domain, query.to, query.from);
        if (!d) return notFound(query.domain);
        if ('missing' in d) return new Reply(404, { error: 'not_found', message: `${query.domain} has no revision ${d.missing}`, domain: query.domain });
        return d;
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: `${r.base}/save`,
      tool: `save_${noun}`,
      success: { schema: saveSchema },
      summary: `Save a ${r.saveSource} ${noun} (creates it or adds a revision)`,
      tags,
      auth: 'required',
      tier: 'member',
      body: r.saveBody,
      errors: [403, 409],
      rateLimits,
      handler: ({ body, principal }) => save(body, principal!),
    }),
    defineEndpoint({
      method: 'POST',
      path: `${r.base}/{domain}/rollback`,
      tool: `rollback_${noun}`,
      success: { schema: rollbackSchema },
      summary: 'Restore an earlier revision as a new revision',
      tags,
      auth: 'required',
      tier: 'member',
      params: rollbackParams,
      body: rollbackBody,
      errors: [403, 404, 409],
      rateLimits,
      async handler({ params, body, principal }) {
        const outcome = await write(principal!.id, (tx) =>
          rollbackEntry<D>(tx, r.tables, params.domain, body.to_revision, {
            principal: principal!,
            ownership: deps.ownership,
            summary: body.edit_summary ?? `Rolled back to revision ${body.to_revision}`,
            now: deps.clock.now(),
            newId: deps.ids.uuid7,
          }),
        );
        return {
          success: true,
          message: `${noun[0]!.toUpperCase()}${noun.slice(1)} ${params.domain} rolled back to revision ${body.to_revision}`,
          domain: params.domain,
          id: outcome.entry.id,
          revision_number: outcome.entry.revision_number,
          rolled_back_to: body.to_revision,
        };
      },
    }),
  ];
  return { endpoints, save, saveSchema, write };
}
