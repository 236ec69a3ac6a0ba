import { CrawlerError, type CrawlerPort, type OutboundRequest, type OutboundResponse } from '../../core/ports/crawler.ts';
import type { SchemaValidator as DocumentValidator, SchemaIssue } from './schema-validation.ts';

/** Limits from SUPPLEMENT "Crawling". */
export const LIMITS = {
  timeoutMs: 10_000,
  adagentsBytes: 10 * 1024 * 1024,
  /** A dereferenced authoritative_location file may be bigger than a pointer file. */
  authoritativeBytes: 20 * 1024 * 1024,
  brandBytes: 256 * 1024,
  adsTxtBytes: 1024 * 1024,
  redirects: 3,
};

/** Where a domain's files live; tests point it at a loopback port (`https://{domain}:8443`). */
export const DEFAULT_ORIGIN = 'https://{domain}';
const originOf = (template: string, domain: string) => template.replace('{domain}', domain);

const JSON_TYPES = ['application/json', 'text/json', 'text/plain'];

export type FetchedDocument =
  /** A document was fetched; `issues` is empty when it passed schema validation. */
  | { kind: 'document'; doc: unknown; issues: SchemaIssue[]; url: string; source: string }
  /** No file (404/410) and no fallback. */
  | { kind: 'missing'; url: string; status: number };

/** A failure worth retrying (network, timeout, 5xx) as opposed to a verdict about the file. */
export class TransientCrawlError extends Error {
  override name = 'TransientCrawlError';
  constructor(
    message: string,
    /** The upstream did not answer in time (probes map this to 504, other failures to 502). */
    readonly timeout = false,
  ) {
    super(message);
  }
}

async function get(crawler: CrawlerPort, url: string, request: OutboundRequest) {
  try {
    return await crawler.fetch(url, { timeoutMs: LIMITS.timeoutMs, ...request });
  } catch (error) {
    if (error instanceof CrawlerError && ['timeout', 'connection_failed', 'dns_failed'].includes(error.code)) {
      throw new TransientCrawlError(`${url}: ${error.message}`, error.code === 'timeout');
    }
    throw error;
  }
}

function parse(text: string): { doc: unknown; issues: SchemaIssue[] } {
  try {
    return { doc: JSON.parse(text), issues: [] };
  } catch (error) {
    return { doc: null, issues: [{ path: '/', message: `not JSON: ${(error as Error).message}` }] };
  }
}

/**
 * Fetch one JSON document; 404/410 -> missing, 5xx -> transient, other non-2xx or a guard refusal
 * (size, type, redirect, SSRF) -> an invalid document with the reason as its issue.
 */
async function fetchJson(
  crawler: CrawlerPort,
  url: string,
  request: OutboundRequest,
  validate: (doc: unknown) => SchemaIssue[],
  source: string,
): Promise<FetchedDocument> {
  let response: OutboundResponse;
  try {
    response = await get(crawler, url, { accept: JSON_TYPES, ...request });
  } catch (error) {
    if (error instanceof CrawlerError) return { kind: 'document', doc: null, issues: [{ path: '/', message: `${error.code}: ${error.message}` }], url, source };
    throw error;
  }
  if (response.status === 404 || response.status === 410) return { kind: 'missing', url, status: response.status };
  if (response.status >= 500) throw new TransientCrawlError(`${url}: HTTP ${response.status}`);
  if (response.status !== 200) return { kind: 'document', doc: null, issues: [{ path: '/', message: `HTTP ${response.status}` }], url, source };
  const parsed = parse(response.text());
  const issues = parsed.issues.length ? parsed.issues : validate(parsed.doc);
  return { kind: 'document', doc: parsed.doc, issues, url: response.url, source };
}

const isPointer = (doc: unknown): doc is { authoritative_location: string } =>
  !!doc && typeof doc === 'object' && typeof (doc as Record<string, unknown>).authoritative_location === 'string' && !('authorized_agents' in (doc as object));

/** Follow a pointer file once: the named URL must answer itself (no redirects) with a full document. */
async function dereference(
  crawler: CrawlerPort,
  pointer: FetchedDocument & { kind: 'document' },
  validate: (doc: unknown) => SchemaIssue[],
  maxBytes: number,
  timeoutMs = LIMITS.timeoutMs,
): Promise<FetchedDocument> {
  if (pointer.issues.length || !isPointer(pointer.doc)) return pointer;
  const target = pointer.doc.authoritative_location;
  const next = await fetchJson(crawler, target, { maxBytes, maxRedirects: 0, redirectPolicy: 'any-public', timeoutMs }, validate, 'authoritative_location');
  if (next.kind === 'missing')
    return {
      kind: 'document',
      doc: null,
      issues: [{ path: '/authoritative_location', message: `${target} answered ${next.status}` }],
      url: target,
      source: 'authoritative_location',
    };
  if (isPointer(next.doc)) return { ...next, issues: [{ path: '/authoritative_location', message: 'the authoritative file is itself a pointer' }] };
  return next;
}

/** `MANAGERDOMAIN=` values of an ads.txt (variables are case-insensitive; comments stripped). */
export function managerDomains(adsTxt: string): string[] {
  const out: string[] = [];
  for (const raw of adsTxt.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const m = /^managerdomain\s*=\s*([^,\s]+)/i.exec(line);
    if (m) out.push(m[1]!.toLowerCase());
  }
  return out;
}

/**
 * The publisher's adagents.json: `https://{domain}/.well-known/adagents.json` (3 same-site HTTPS
 * redirects), its `authoritative_location` when it is a pointer, and on 404 the `ads.txt`
 * MANAGERDOMAIN's file.
 */
export async function fetchAdagents(
  crawler: CrawlerPort,
  domain: string,
  validator: DocumentValidator,
  origin = DEFAULT_ORIGIN,
  timeoutMs = LIMITS.timeoutMs,
): Promise<FetchedDocument> {
  const validate = (doc: unknown) => validator.adagents(doc);
  const wellKnown = await fetchJson(
    crawler,
    `${originOf(origin, domain)}/.well-known/adagents.json`,
    { maxBytes: LIMITS.adagentsBytes, maxRedirects: LIMITS.redirects, redirectPolicy: 'same-site', timeoutMs },
    validate,
    'adagents_json',
  );
  if (wellKnown.kind === 'document') return dereference(crawler, wellKnown, validate, LIMITS.authoritativeBytes, timeoutMs);

  let ads: OutboundResponse;
  try {
    ads = await get(crawler, `${originOf(origin, domain)}/ads.txt`, {
      timeoutMs,
      maxBytes: LIMITS.adsTxtBytes,
      maxRedirects: LIMITS.redirects,
      redirectPolicy: 'same-site',
      accept: ['text/plain'],
    });
  } catch (error) {
    if (error instanceof CrawlerError) return wellKnown;
    throw error;
  }
  if (ads.status !== 200) return wellKnown;
  const manager = managerDomains(ads.text()).find((d) => d !== domain);
  if (!manager) return wellKnown;
  const managed = await fetchJson(
    crawler,
    `${originOf(origin, manager)}/.well-known/adagents.json`,
    { maxBytes: LIMITS.adagentsBytes, maxRedirects: LIMITS.redirects, redirectPolicy: 'same-site', timeoutMs },
    validate,
    'ads_txt_managerdomain',
  );
  if (managed.kind === 'missing') return wellKnown;
  return dereference(crawler, managed, validate, LIMITS.authoritativeBytes, timeoutMs);
}

/** The operator's brand.json (256 KB cap), following an `authoritative_location` pointer once. */
export async function fetchBrandJson(crawler: CrawlerPort, domain: string, validator: DocumentValidator, origin = DEFAULT_ORIGIN): Promise<FetchedDocument> {
  const validate = (doc: unknown) => validator.brand(doc);
  const first = await fetchJson(
    crawler,
    `${originOf(origin, domain)}/.well-known/brand.json`,
    { maxBytes: LIMITS.brandBytes, maxRedirects: LIMITS.redirects, redirectPolicy: 'same-site' },
    validate,
    'brand_json',
  );
  if (first.kind === 'missing') return first;
  return dereference(crawler, first, validate, LIMITS.brandBytes);
}
