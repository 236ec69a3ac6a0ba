import * as v from 'valibot';
import { defineEndpoint } from '../../../core/endpoint.ts';
import { ProtocolError } from '../../../core/errors.ts';
import { sql } from '../../../core/sql.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import { saveEntry, type SaveOutcome } from '../../../lib/revisioned/store.ts';
import type { RevisionDeps } from '../../../lib/revisioned/endpoints.ts';
import { canonicalJson } from '../../../lib/canonical-json.ts';
import * as r from '../../../lib/response-schemas.ts';
import { BRAND_TABLES } from '../tables.ts';
import { domainQuery, type BrandData } from '../schemas.ts';
import { brandManifestOut } from '../responses.ts';
import { enrichDomain, type Enrichment } from './enrich.ts';

const enrichOut = r.obj({
  domain: r.str,
  brand_name: r.str,
  brand_manifest: brandManifestOut,
  source: v.literal('enriched'),
  saved: r.bool,
  existing_source: r.nul(r.str),
  cached: r.bool,
  fetched_from: r.str,
  fetched_at: r.time,
});

/**
 * `GET /api/brands/enrich`: the brand a domain's homepage shows (name, description, logos, colours),
 * as a brand manifest. The result is kept (shared by every instance) for the configured TTL; it
 * becomes the domain's brand entry (source `enriched`, editor `system`) unless a better source
 * (community, hosted, brand.json) already has one.
 */
export function enrichEndpoint(
  deps: RevisionDeps,
  write: (actor: string, fn: (tx: Queryable) => Promise<SaveOutcome<BrandData>>) => Promise<SaveOutcome<BrandData>>,
) {
  const { db, clock } = deps;
  return defineEndpoint({
    method: 'GET',
    path: '/api/brands/enrich',
    tool: 'enrich_brand',
    summary: "Brand identity read from a domain's homepage",
    description:
      'Fetches the homepage (and its web manifest) through the SSRF guard, at most 1 MB, HTML only, nothing executed, and reads name, description, logos and colours into a brand manifest. ' +
      'Results are reused for a day. Saved as the brand entry (source enriched, editor system) when the domain has no community, hosted or brand.json entry.',
    tags: ['Brands'],
    query: domainQuery,
    rateLimits: [{ name: 'brand.enrich', per: 'ip', limit: 10, windowSeconds: 60 }],
    errors: [502, 503, 504],
    success: { schema: enrichOut },
    async handler({ query }) {
      const crawler = deps.enrich.crawler;
      if (!crawler) throw new ProtocolError('SERVICE_UNAVAILABLE', 'Enrichment needs the crawler, which this deployment does not run');
      const domain = query.domain;
      const now = clock.now();
      const fresh = new Date(now.getTime() - deps.enrich.ttlSeconds * 1000);
      const [hit] = await db.query<{ result: Enrichment; fetched_at: Date }>(sql`
        SELECT result, fetched_at FROM brand_enrichments WHERE domain = ${domain}::text AND fetched_at > ${fresh}::timestamptz`);
      let result = hit?.result;
      let fetchedAt = hit ? new Date(hit.fetched_at) : now;
      if (!result) {
        result = await enrichDomain(crawler, domain, deps.enrich.origin);
        fetchedAt = clock.now();
        await db.query(sql`
          INSERT INTO brand_enrichments (domain, result, fetched_at) VALUES (${domain}::text, ${result}::jsonb, ${fetchedAt}::timestamptz)
          ON CONFLICT (domain) DO UPDATE SET result = EXCLUDED.result, fetched_at = EXCLUDED.fetched_at`);
      }
      const data: BrandData = { brand_name: result.brand_name, brand_manifest: result.brand_manifest };
      let saved = false;
      let existing: string | null = null;
      try {
        await write('system', async (tx) => {
          const outcome = await saveEntry<BrandData>(tx, BRAND_TABLES, domain, () => data, 'enriched', {
            principal: null,
            summary: 'Enriched from the homepage',
            now: clock.now(),
            newId: deps.ids.uuid7,
            // Only an earlier enrichment gives way; unchanged data is not a new revision.
            replaceable: ['enriched'],
          });
          if (!outcome.created && canonicalJson(outcome.previous) === canonicalJson(data)) throw new Unchanged();
          return outcome;
        });
        saved = true;
      } catch (error) {
        if (error instanceof Unchanged) existing = 'enriched';
        else if (error instanceof ProtocolError && error.code === 'CONFLICT' && typeof error.details?.source === 'string') existing = error.details.source;
        else if (error instanceof ProtocolError && error.code === 'CONFLICT') existing = 'brand_json';
        else throw error;
      }
      return {
        domain,
        brand_name: result.brand_name,
        brand_manifest: result.brand_manifest,
        source: 'enriched' as const,
        saved,
        existing_source: existing,
        cached: !!hit,
        fetched_from: result.url,
        fetched_at: fetchedAt.toISOString(),
      };
    },
  });
}

/** Rolls back a save whose data equals the current revision. */
class Unchanged extends Error {}
