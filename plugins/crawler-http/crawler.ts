import { readCapped } from '../../lib/streams.ts';
import { promises as dns } from 'node:dns';
import { isIPv4 } from 'node:net';
import { CrawlerError, type CrawlerPort, type OutboundRequest, type OutboundResponse } from '../../core/ports/crawler.ts';
import { blockedReason, cidrContains, isIpLiteral, parseCidr, type Cidr } from './addresses.ts';
import { blockedNameReason, normalizeHost, registrableDomain } from './hostnames.ts';

/** Name resolution used by the guard; tests inject one to make a name resolve to 10.x. */
export interface Resolver {
  /** Every address of a name (A and AAAA). */
  lookup(host: string): Promise<string[]>;
  resolveTxt(name: string): Promise<string[][]>;
}

export const systemResolver: Resolver = {
  async lookup(host) {
    const answers = await dns.lookup(host, { all: true, verbatim: true });
    return answers.map((a) => a.address);
  },
  resolveTxt: (name) => dns.resolveTxt(name),
};

export interface HttpCrawlerOptions {
  /**
   * Addresses (or CIDRs) reachable even though they are not public; each must be loopback.
   * Tests set it; production presets never do. A URL whose every address is allowlisted may also
   * use plain `http:`.
   */
  allowlist?: readonly string[];
  resolver?: Resolver;
  /** Sent on every request unless the caller sets its own. */
  userAgent?: string;
  /** Trusted CA certificates (PEM) replacing the system store: tests only (a self-signed loopback server). */
  ca?: string;
}

const DEFAULT_TIMEOUT = 10_000;
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const DEFAULT_REDIRECTS = 3;

const LOOPBACK = [parseCidr('127.0.0.0/8')!, parseCidr('::1/128')!];

/** Parse the allowlist and refuse anything that is not loopback (the option exists for tests only). */
export function parseAllowlist(entries: readonly string[]): Cidr[] {
  return entries.map((entry) => {
    const cidr = parseCidr(entry);
    if (!cidr) throw new Error(`crawler allowlist: "${entry}" is not an IP address or CIDR`);
    const loopback = cidr.family === 4 ? cidr.groups[0]! >> 8 === 127 && cidr.bits >= 8 : cidr.groups.slice(0, 7).every((g) => g === 0) && cidr.groups[7] === 1;
    if (!loopback) throw new Error(`crawler allowlist: "${entry}" is not a loopback range; only loopback may be allowlisted`);
    return cidr;
  });
}

interface Target {
  url: URL;
  /** Normalized host name or IP, without brackets. */
  host: string;
  /** The checked address the connection is pinned to. */
  address: string;
  /** Every address resolved was in the allowlist (permits `http:`). */
  allowlisted: boolean;
}

/**
 * SSRF-guarded outbound HTTP over Bun's fetch. The host is resolved once, every address checked,
 * and the request sent to the checked IP with `Host` and the TLS server name set to the original
 * host, so the certificate is still verified for the name and a second DNS answer is never used.
 * Redirects are followed by hand so each hop goes through the same checks.
 */
export class HttpCrawler implements CrawlerPort {
  private readonly allow: Cidr[];
  private readonly resolver: Resolver;

  constructor(private readonly options: HttpCrawlerOptions = {}) {
    this.allow = parseAllowlist(options.allowlist ?? []);
    this.resolver = options.resolver ?? systemResolver;
  }

  private isAllowlisted(ip: string): boolean {
    return this.allow.some((c) => cidrContains(c, ip));
  }

  /** Resolve and check a host; returns the addresses (all public or allowlisted; with `loopback`, loopback too). */
  private async checkHost(rawHost: string, loopback = false): Promise<{ host: string; addresses: string[]; allowlisted: boolean }> {
    const normalized = normalizeHost(rawHost);
    if (!normalized) throw new CrawlerError('invalid_url', `Invalid host "${rawHost.slice(0, 100)}"`);
    const host = normalized.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (isIpLiteral(host)) {
      addresses = [host];
    } else {
      const nameReason = loopback && host === 'localhost' ? null : blockedNameReason(host);
      if (nameReason) throw new CrawlerError('ssrf_blocked', `Refused host ${host}: ${nameReason}`);
      try {
        addresses = await this.resolver.lookup(host);
      } catch (error) {
        throw new CrawlerError('dns_failed', `DNS lookup of ${host} failed: ${(error as Error).message}`);
      }
      if (addresses.length === 0) throw new CrawlerError('dns_failed', `DNS lookup of ${host} returned no address`);
    }
    let allowlisted = true;
    for (const address of addresses) {
      if (this.isAllowlisted(address) || (loopback && LOOPBACK.some((c) => cidrContains(c, address)))) continue;
      allowlisted = false;
      const reason = blockedReason(address);
      if (reason) throw new CrawlerError('ssrf_blocked', `Refused ${host}: ${address} is ${reason}`);
    }
    return { host, addresses, allowlisted };
  }

  async assertPublicHost(host: string): Promise<void> {
    await this.checkHost(host);
  }

  async resolveTxt(name: string): Promise<string[]> {
    const host = normalizeHost(name);
    if (!host || isIpLiteral(host)) throw new CrawlerError('invalid_url', `Invalid DNS name "${name.slice(0, 100)}"`);
    try {
      return (await this.resolver.resolveTxt(host)).map((chunks) => chunks.join(''));
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') return [];
      throw new CrawlerError('dns_failed', `TXT lookup of ${host} failed: ${(error as Error).message}`);
    }
  }

  private async target(raw: string, requireHttps: boolean, loopback = false): Promise<Target> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new CrawlerError('invalid_url', `Invalid URL "${raw.slice(0, 200)}"`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new CrawlerError('invalid_url', `Unsupported scheme ${url.protocol}`);
    if (url.username || url.password) throw new CrawlerError('invalid_url', 'URLs with credentials are refused');
    const checked = await this.checkHost(url.hostname, loopback);
    if (url.protocol === 'http:' && (requireHttps || !checked.allowlisted)) {
      throw new CrawlerError('invalid_url', `Only https URLs are fetched (got ${url.origin})`);
    }
    // Prefer IPv4 when both families answer: loopback test servers and most hosts listen there.
    const address = checked.addresses.find((a) => isIPv4(a)) ?? checked.addresses[0]!;
    return { url, host: checked.host, address, allowlisted: checked.allowlisted };
  }

  async fetch(rawUrl: string, request: OutboundRequest = {}): Promise<OutboundResponse> {
    const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT;
    const maxBytes = request.maxBytes ?? DEFAULT_MAX_BYTES;
    const maxRedirects = request.maxRedirects ?? DEFAULT_REDIRECTS;
    const policy = request.redirectPolicy ?? 'same-site';
    const requireHttps = request.requireHttps ?? true;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const deadline = <T>(work: Promise<T>): Promise<T> =>
      Promise.race([
        work,
        new Promise<never>((_, reject) => {
          if (controller.signal.aborted) reject(timeoutError(timeoutMs));
          controller.signal.addEventListener('abort', () => reject(timeoutError(timeoutMs)), { once: true });
        }),
      ]);
    try {
      return await deadline(this.follow(rawUrl, request, { maxBytes, maxRedirects, policy, requireHttps, signal: controller.signal, timeoutMs }));
    } finally {
      clearTimeout(timer);
    }
  }

  private async follow(
    rawUrl: string,
    request: OutboundRequest,
    limits: { maxBytes: number; maxRedirects: number; policy: 'same-site' | 'any-public'; requireHttps: boolean; signal: AbortSignal; timeoutMs: number },
  ): Promise<OutboundResponse> {
    const chain: string[] = [];
    let method = request.method ?? 'GET';
    let body = request.body;
    let current = await this.target(rawUrl, limits.requireHttps, request.allowLoopback);
    const site = registrableDomain(current.host);
    for (;;) {
      chain.push(current.url.href);
      const response = await this.send(current, method, body, request.headers, limits);
      if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
        await response.body?.cancel().catch(() => {});
        if (chain.length > limits.maxRedirects) {
          throw new CrawlerError('too_many_redirects', `More than ${limits.maxRedirects} redirects from ${chain[0]}`);
        }
        let next: URL;
        try {
          next = new URL(response.headers.get('location')!, current.url);
        } catch {
          throw new CrawlerError('redirect_refused', 'Redirect to an invalid URL');
        }
        if (chain.includes(next.href)) throw new CrawlerError('too_many_redirects', `Redirect loop at ${next.href}`);
        // Redirects must be HTTPS, even from an allowlisted http test origin.
        if (next.protocol !== 'https:') {
          throw new CrawlerError('redirect_refused', `Redirect to non-HTTPS URL ${next.origin} refused`);
        }
        const hop = await this.target(next.href, limits.requireHttps, request.allowLoopback);
        if (limits.policy === 'same-site' && registrableDomain(hop.host) !== site) {
          throw new CrawlerError('redirect_refused', `Redirect from ${site} to another site (${hop.host}) refused`);
        }
        // 301/302/303 turn a POST into a GET (as browsers do); 307/308 repeat it.
        if (response.status !== 307 && response.status !== 308) {
          method = method === 'HEAD' ? 'HEAD' : 'GET';
          body = undefined;
        }
        current = hop;
        continue;
      }
      const ok = response.status >= 200 && response.status < 300;
      if (ok && request.accept?.length) {
        const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
        if (!request.accept.some((a) => a.toLowerCase() === type)) {
          await response.body?.cancel().catch(() => {});
          throw new CrawlerError('bad_content_type', `Expected ${request.accept.join(' or ')}, got ${type || 'no content type'}`);
        }
      }
      const bytes = await readBody(response, limits.maxBytes);
      return {
        url: current.url.href,
        status: response.status,
        headers: response.headers,
        body: bytes,
        chain,
        text: () => new TextDecoder().decode(bytes),
      };
    }
  }

  /** One request to the pinned address; no redirect following, no connection reuse across names. */
  private async send(
    target: Target,
    method: string,
    body: string | Uint8Array | undefined,
    headers: Record<string, string> | undefined,
    limits: { signal: AbortSignal; timeoutMs: number },
  ): Promise<Response> {
    const pinned = new URL(target.url.href);
    pinned.hostname = isIPv4(target.address) ? target.address : `[${target.address}]`;
    const outgoing = new Headers(headers);
    outgoing.set('host', target.url.host);
    if (!outgoing.has('user-agent')) outgoing.set('user-agent', this.options.userAgent ?? 'registry-crawler/1.0');
    try {
      return await fetch(pinned.href, {
        method,
        headers: outgoing,
        body: method === 'GET' || method === 'HEAD' ? undefined : body,
        redirect: 'manual',
        signal: limits.signal,
        keepalive: false,
        // Verify the certificate (and send SNI) for the name, not the IP we connect to.
        tls: {
          ...(isIpLiteral(target.host) ? {} : { serverName: target.host }),
          ...(this.options.ca ? { ca: this.options.ca } : {}),
        },
      } as RequestInit);
    } catch (error) {
      if (limits.signal.aborted) throw timeoutError(limits.timeoutMs);
      throw new CrawlerError('connection_failed', `Request to ${target.url.origin} failed: ${(error as Error).message}`);
    }
  }
}

function timeoutError(ms: number): CrawlerError {
  return new CrawlerError('timeout', `No complete answer within ${ms} ms`);
}

/** Read a body, refusing it as soon as it passes `maxBytes` (Content-Length is checked first but not trusted). */
async function readBody(response: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new CrawlerError('too_large', `Body of ${declared} bytes exceeds ${maxBytes}`);
  }
  const body = await readCapped(response.body, maxBytes);
  if (!body) throw new CrawlerError('too_large', `Body exceeds ${maxBytes} bytes`);
  return body;
}
