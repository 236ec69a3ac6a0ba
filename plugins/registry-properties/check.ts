import * as v from 'valibot';
import { defineEndpoint, type EndpointDefinition } from '../../core/endpoint.ts';
import { notFound } from '../../core/errors.ts';
import { sql } from '../../core/sql.ts';
import { DomainError, normalizeDomain } from '../../lib/domain.ts';
import type { RevisionDeps } from '../../lib/revisioned/endpoints.ts';
import { propertyCheckOut, propertyCheckReportOut } from './responses.ts';

/** How long a check report can be read back. */
const REPORT_DAYS = 7;

/**
 * Ad tech infrastructure that is never a publisher (ad servers, exchanges, CDNs, tag managers,
 * measurement): a domain equal to one of these, or below it, goes to `remove` as blocked.
 */
const BLOCKED: Record<string, string> = {
  'doubleclick.net': 'ad_server',
  'googlesyndication.com': 'ad_server',
  'googleadservices.com': 'ad_server',
  'googletagmanager.com': 'tag_manager',
  'googletagservices.com': 'tag_manager',
  'google-analytics.com': 'measurement',
  'adnxs.com': 'exchange',
  'amazon-adsystem.com': 'exchange',
  'rubiconproject.com': 'exchange',
  'pubmatic.com': 'exchange',
  'openx.net': 'exchange',
  'casalemedia.com': 'exchange',
  'criteo.com': 'exchange',
  'criteo.net': 'exchange',
  'taboola.com': 'intermediary',
  'outbrain.com': 'intermediary',
  'scorecardresearch.com': 'measurement',
  'moatads.com': 'measurement',
  'doubleverify.com': 'measurement',
  'adsafeprotected.com': 'measurement',
  'cloudfront.net': 'cdn',
  'akamaihd.net': 'cdn',
  'akamaized.net': 'cdn',
  'fastly.net': 'cdn',
  'cloudflare.net': 'cdn',
};

function blockedType(domain: string): string | null {
  for (let d = domain; d.includes('.'); d = d.slice(d.indexOf('.') + 1)) if (BLOCKED[d]) return BLOCKED[d]!;
  return null;
}

/** The canonical publisher domain: normalized (scheme, path, port, case, IDNA) without a leading www. or m. */
function canonical(input: string): string {
  const domain = normalizeDomain(input);
  const stripped = domain.replace(/^(?:www\d*|m)\./, '');
  return stripped.includes('.') ? stripped : domain;
}

const body = v.object({
  domains: v.pipe(
    v.array(v.pipe(v.string('must be a string'), v.maxLength(512, 'must be at most 512 characters')), 'must be an array of domains'),
    v.minLength(1, 'must list at least one domain'),
    v.maxLength(10_000, 'accepts at most 10000 domains'),
  ),
});

/**
 * `POST /api/properties/check` (the official client's checkPropertyList): sort a buyer's domain list
 * into remove (duplicates, ad tech infrastructure, not a domain), modify (normalized), assess (not in
 * the registry) and ok (registered), and keep the summary for seven days under `report_id`.
 */
export function propertyCheckEndpoints(deps: RevisionDeps): EndpointDefinition[] {
  const { db } = deps;
  const check = defineEndpoint({
    method: 'POST',
    path: '/api/properties/check',
    tool: 'check_property_list',
    success: { schema: propertyCheckOut },
    summary: 'Check a list of publisher domains: remove / modify / assess / ok buckets, kept 7 days as a report',
    tags: ['Properties'],
    body,
    rateLimits: [{ name: 'property.check', per: 'ip', limit: 20, windowSeconds: 60 }],
    errors: [400, 429],
    async handler({ body }) {
      const remove: Array<{ input: string; canonical: string; reason: 'duplicate' | 'blocked'; domain_type?: string; blocked_reason?: string }> = [];
      const modify: Array<{ input: string; canonical: string; reason: string }> = [];
      const candidates: Array<{ input: string; domain: string }> = [];
      const seen = new Set<string>();
      for (const input of body.domains) {
        let domain: string;
        try {
          domain = canonical(input);
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          remove.push({ input, canonical: input, reason: 'blocked', domain_type: 'invalid', blocked_reason: `not a domain name: ${error.message}` });
          continue;
        }
        if (seen.has(domain)) {
          remove.push({ input, canonical: domain, reason: 'duplicate' });
          continue;
        }
        seen.add(domain);
        const type = blockedType(domain);
        if (type) {
          remove.push({ input, canonical: domain, reason: 'blocked', domain_type: type, blocked_reason: `${type.replace('_', ' ')}, not a publisher` });
          continue;
        }
        if (domain !== input)
          modify.push({ input, canonical: domain, reason: input.trim().toLowerCase() === domain ? 'normalized' : 'normalized (prefix, scheme, path or case)' });
        candidates.push({ input, domain });
      }
      const known = new Map(
        (
          await db.query<{ domain: string; source: string }>(
            sql`SELECT domain, source FROM property_entries WHERE domain = ANY(${candidates.map((c) => c.domain)}::text[])`,
          )
        ).map((r) => [r.domain, r.source]),
      );
      const ok = candidates.filter((c) => known.has(c.domain)).map((c) => ({ domain: c.domain, source: known.get(c.domain)! }));
      const assess = candidates.filter((c) => !known.has(c.domain)).map((c) => ({ domain: c.domain }));
      const summary = { total: body.domains.length, remove: remove.length, modify: modify.length, assess: assess.length, ok: ok.length };
      const id = deps.ids.uuid7();
      const now = deps.clock.now();
      const result = { summary, remove, modify, assess, ok };
      await db.transaction(async (tx) => {
        // Expired reports go as new ones come (bounded work per call).
        await tx.query(sql`
          DELETE FROM property_check_reports WHERE id IN (
            SELECT id FROM property_check_reports WHERE expires_at < ${now}::timestamptz ORDER BY expires_at LIMIT 100)`);
        await tx.query(sql`
          INSERT INTO property_check_reports (id, summary, result, created_at, expires_at)
          VALUES (${id}::uuid, ${summary}::jsonb, ${result}::jsonb, ${now}::timestamptz, ${new Date(now.getTime() + REPORT_DAYS * 86_400_000)}::timestamptz)`);
      });
      return { ...result, report_id: id };
    },
  });

  const report = defineEndpoint({
    method: 'GET',
    path: '/api/properties/check/{reportId}',
    tool: 'get_property_check_report',
    success: { schema: propertyCheckReportOut },
    summary: 'A property check report (its summary) for seven days after the check',
    tags: ['Properties'],
    params: v.object({ reportId: v.pipe(v.string(), v.uuid('must be a report id (UUID)')) }),
    errors: [400, 404],
    async handler({ params }) {
      const [row] = await db.query<{ summary: Record<string, number>; created_at: Date; expires_at: Date }>(sql`
        SELECT summary, created_at, expires_at FROM property_check_reports
        WHERE id = ${params.reportId}::uuid AND expires_at > ${deps.clock.now()}::timestamptz`);
      if (!row) throw notFound(`No property check report ${params.reportId} (reports are kept ${REPORT_DAYS} days)`);
      return {
        report_id: params.reportId,
        summary: row.summary,
        created_at: new Date(row.created_at).toISOString(),
        expires_at: new Date(row.expires_at).toISOString(),
      };
    },
  });
  return [check, report];
}
