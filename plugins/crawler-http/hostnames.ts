import { getDomain } from 'tldts';
import { isIpLiteral } from './addresses.ts';

/**
 * Host name rules of the SSRF guard. Names are normalized by the WHATWG URL parser first, so
 * numeric forms (`0x7f.1`, `2130706433`, `017700000001`, `127.1`) arrive here as the dotted
 * address they denote and are judged as IPs, never as names.
 */

/** Host as the URL parser normalizes it (lowercase, punycode, IPv4 canonical, IPv6 in brackets), or null. */
export function normalizeHost(host: string): string | null {
  const trimmed = host.trim();
  if (!trimmed || /[\s/?#@\\]/.test(trimmed)) return null;
  try {
    const url = new URL(`http://${trimmed}/`);
    if (url.port) return null;
    return url.hostname.replace(/\.$/, '');
  } catch {
    return null;
  }
}

/** Why a host name (not an IP) may never be crawled, or null. */
export function blockedNameReason(host: string): string | null {
  const name = host.toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return 'localhost';
  if (name.endsWith('.local')) return 'mDNS .local name';
  if (name.endsWith('.internal')) return '.internal name';
  if (name.endsWith('.localdomain') || name.endsWith('.home.arpa') || name.endsWith('.lan')) return 'private-use name';
  // Single-label names resolve through search domains to internal hosts.
  if (!name.includes('.')) return 'single-label name';
  return null;
}

/**
 * The registrable domain (eTLD+1) of a host, from the Public Suffix List bundled in `tldts`,
 * private section included so that `alice.github.io` and `bob.github.io` are different sites.
 * An IP is its own site, and so is a host that is itself a public suffix (`github.io`,
 * `co.uk`): it has no registrable domain, so it can only be same-site with itself.
 * Names under a TLD the list does not know (`pub.test`) follow the list's default `*` rule.
 */
export function registrableDomain(host: string): string {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (isIpLiteral(name.replace(/^\[|\]$/g, ''))) return name;
  return getDomain(name, { allowPrivateDomains: true, extractHostname: false, validateHostname: false }) ?? name;
}
