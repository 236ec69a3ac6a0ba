import { token } from '../token.ts';

export type CrawlerErrorCode =
  | 'invalid_url'
  | 'ssrf_blocked'
  | 'dns_failed'
  | 'connection_failed'
  | 'timeout'
  | 'too_large'
  | 'too_many_redirects'
  | 'redirect_refused'
  | 'bad_content_type';

/** Every refusal or failure of an outbound request; `code` says which guard or step failed. */
export class CrawlerError extends Error {
  override name = 'CrawlerError';
  constructor(
    readonly code: CrawlerErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface OutboundRequest {
  method?: 'GET' | 'POST' | 'HEAD';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Whole-request deadline (connect + headers + body). Default 10 s. */
  timeoutMs?: number;
  /** Body cap; the body is streamed and the request aborted past it. Default 10 MB. */
  maxBytes?: number;
  /** Redirects followed (each hop re-validated). Default 3; 0 refuses any redirect. */
  maxRedirects?: number;
  /** `same-site` (default): redirects must stay on the registrable domain and HTTPS (crawling). `any-public`: any public HTTPS host. */
  redirectPolicy?: 'same-site' | 'any-public';
  /** Only HTTPS URLs (default true; loopback allowlisted hosts may use http in tests). */
  requireHttps?: boolean;
  /** Accepted media types (e.g. `application/json`) of a 2xx answer; anything else is `bad_content_type`. Other statuses are returned as they are. */
  accept?: readonly string[];
  /**
   * Loopback (127.0.0.0/8, ::1, `localhost`) is reachable for this request, over plain http too.
   * Only the webhooks' development setting (a buyer's receiver on a laptop) sets it; every other
   * private or reserved range stays refused.
   */
  allowLoopback?: boolean;
}

export interface OutboundResponse {
  /** Final URL after redirects. */
  url: string;
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** Every URL followed, in order (the first is the requested one). */
  chain: readonly string[];
  text(): string;
}

/**
 * Outbound HTTP and DNS, guarded against SSRF (SUPPLEMENT "Crawling"): names are resolved first,
 * private/reserved/mapped addresses refused, the connection pinned to the checked address, every
 * redirect re-checked, time and size bounded. Loopback is reachable only through an explicit
 * allowlist option (tests); production presets never set it. A name is resolved once per hop and
 * a later DNS answer is never used (rebinding). Contract: test/contract/crawler.contract.ts.
 */
export interface CrawlerPort {
  fetch(url: string, request?: OutboundRequest): Promise<OutboundResponse>;
  /** TXT records of a name (each record's chunks joined); an unknown name answers []. */
  resolveTxt(name: string): Promise<string[]>;
  /** Resolve a host name and throw `ssrf_blocked` unless every address is public. */
  assertPublicHost(host: string): Promise<void>;
}

export const Crawler = token<CrawlerPort>('core.crawler');
