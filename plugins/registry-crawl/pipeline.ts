import type { DatabasePort } from '../../core/ports/database.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { EventLogPort } from '../../core/ports/events.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { Logger } from '../../core/log.ts';
import type { AdagentsDiff, DiscoveryPort } from '../../core/ports/discovery.ts';
import { fetchAdagents, fetchBrandJson, TransientCrawlError, DEFAULT_ORIGIN, type FetchedDocument } from '../../lib/registry-documents/fetch.ts';
import { eventsForDiff } from './events.ts';
import type { AuthoritativeRecordsPort } from '../../core/ports/authoritative-records.ts';
import type { SchemaValidator as DocumentValidator, SchemaIssue } from '../../lib/registry-documents/schema-validation.ts';

export interface CrawlDeps {
  db: DatabasePort;
  crawler: CrawlerPort;
  events: EventLogPort;
  /** The discovery model (registry-agents' tables). */
  projection: DiscoveryPort;
  validator: DocumentValidator;
  clock: ClockPort;
  logger: Logger;
  /** Resolution records of registry-brands / registry-properties, when deployed. */
  brandRecords?: AuthoritativeRecordsPort;
  adagentsRecords?: AuthoritativeRecordsPort;
  /** `https://{domain}` unless a test points it at a loopback port. */
  origin?: string;
}

export interface CrawlOutcome {
  domain: string;
  adagents: 'valid' | 'invalid' | 'missing';
  source?: string;
  issues?: SchemaIssue[];
  brand_json: 'valid' | 'invalid' | 'missing' | 'unreachable';
  changes: {
    properties_created: number;
    properties_updated: number;
    properties_stale: number;
    properties_reactivated: number;
    agents_discovered: number;
    authorizations_granted: number;
    authorizations_revoked: number;
    authorizations_modified: number;
  };
  events: number;
}

function summarize(diff: AdagentsDiff | null): CrawlOutcome['changes'] {
  return {
    properties_created: diff?.properties.created.length ?? 0,
    properties_updated: diff?.properties.updated.length ?? 0,
    properties_stale: diff?.properties.stale.length ?? 0,
    properties_reactivated: diff?.properties.reactivated.length ?? 0,
    agents_discovered: diff?.agents_discovered.length ?? 0,
    authorizations_granted: diff?.authorizations.granted.length ?? 0,
    authorizations_revoked: diff?.authorizations.revoked.length ?? 0,
    authorizations_modified: diff?.authorizations.modified.length ?? 0,
  };
}

/**
 * Crawl one publisher domain: fetch and validate adagents.json (pointer, ads.txt fallback),
 * project it as a diff against the stored registry and append the diff's events in the same
 * transaction; then the operator brand.json. A missing file stales a known publisher and leaves
 * unknown domains alone. Network failures throw TransientCrawlError (the job is retried).
 */
export async function crawlDomain(deps: CrawlDeps, domain: string): Promise<CrawlOutcome> {
  const now = deps.clock.now();
  const adagents = await fetchAdagents(deps.crawler, domain, deps.validator, deps.origin ?? DEFAULT_ORIGIN);
  let diff: AdagentsDiff | null = null;
  let eventCount = 0;
  const inTransaction = async (tx: Parameters<EventLogPort['append']>[0], d: AdagentsDiff, source: string) => {
    const events = eventsForDiff(d, source);
    eventCount = events.length;
    await deps.events.append(tx, events);
  };
  if (adagents.kind === 'document') {
    const valid = adagents.issues.length === 0;
    diff = await deps.projection.projectAdagents(domain, adagents.doc, {
      valid,
      errors: adagents.issues,
      now,
      source: adagents.source,
      inTransaction: async (tx, d) => {
        await inTransaction(tx, d, adagents.source);
        if (valid) await deps.adagentsRecords?.record(tx, domain, adagents.doc as Record<string, unknown>);
      },
    });
  } else {
    if (await deps.projection.isKnownPublisher(domain)) {
      diff = await deps.projection.projectAdagents(domain, null, {
        valid: false,
        errors: [{ path: '/', message: `adagents.json answered ${adagents.status}` }],
        now,
        source: 'adagents_json',
        inTransaction: (tx, d) => inTransaction(tx, d, 'adagents_json'),
      });
    }
  }

  let brand: FetchedDocument | null = null;
  try {
    brand = await fetchBrandJson(deps.crawler, domain, deps.validator, deps.origin ?? DEFAULT_ORIGIN);
  } catch (error) {
    // brand.json is secondary: a network failure there does not fail (and re-run) the whole crawl.
    if (!(error instanceof TransientCrawlError)) throw error;
    deps.logger.warn({ domain, err: error.message }, 'brand.json unreachable');
  }
  if (brand?.kind === 'document') {
    const valid = brand.issues.length === 0;
    const doc = brand.doc as Record<string, unknown>;
    await deps.projection.projectBrandJson(domain, brand.doc, {
      valid,
      now,
      inTransaction: async (tx) => {
        if (valid) await deps.brandRecords?.record(tx, domain, doc);
      },
    });
  }

  const outcome: CrawlOutcome = {
    domain,
    adagents: adagents.kind === 'missing' ? 'missing' : adagents.issues.length ? 'invalid' : 'valid',
    ...(adagents.kind === 'document' ? { source: adagents.source } : {}),
    ...(adagents.kind === 'document' && adagents.issues.length ? { issues: adagents.issues.slice(0, 10) } : {}),
    brand_json: brand === null ? 'unreachable' : brand.kind === 'missing' ? 'missing' : brand.issues.length ? 'invalid' : 'valid',
    changes: summarize(diff),
    events: eventCount,
  };
  deps.logger.info({ domain, adagents: outcome.adagents, brand_json: outcome.brand_json, events: outcome.events, changes: outcome.changes }, 'crawled');
  return outcome;
}
