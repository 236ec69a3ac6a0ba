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
 * Second-level labels under which registrations happen one level deeper (co.uk, com.au ...).
 * Without the full Public Suffix List this covers the common country-code cases; anything else
 * is treated as `label.tld`.
 */
const MULTI_LABEL_SUFFIXES = new Set([
  'co.uk', 'org.uk', 'ac.uk', 'gov.uk', 'ltd.uk', 'plc.uk', 'me.uk', 'net.uk',
  'com.au', 'net.au', 'org.au', 'edu.au', 'gov.au',
  'co.nz', 'org.nz', 'net.nz', 'co.jp', 'ne.jp', 'or.jp', 'ac.jp', 'co.kr', 'or.kr',
  'com.br', 'net.br', 'org.br', 'com.cn', 'net.cn', 'org.cn', 'com.mx', 'com.ar', 'com.tr',
  'co.in', 'net.in', 'org.in', 'co.za', 'com.sg', 'com.hk', 'com.tw', 'co.il', 'co.id', 'com.my',
  'github.io', 'gitlab.io', 'vercel.app', 'netlify.app', 'pages.dev', 'web.app', 'herokuapp.com',
  'cloudfront.net', 'azurewebsites.net', 'appspot.com', 'blogspot.com',
]);

/** The registrable domain (eTLD+1) of a host; an IP is its own registrable domain. */
export function registrableDomain(host: string): string {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (isIpLiteral(name.replace(/^\[|\]$/g, ''))) return name;
  const labels = name.split('.');
  if (labels.length <= 2) return name;
  const lastTwo = labels.slice(-2).join('.');
  return MULTI_LABEL_SUFFIXES.has(lastTwo) ? labels.slice(-3).join('.') : lastTwo;
}

/** A bare domain as users type it (crawl requests): lowercased, trimmed, scheme and path stripped. */
export function normalizeDomainInput(input: string): string | null {
  let s = input.trim().toLowerCase();
  s = s.replace(/^https?:\/\//, '').replace(/[/?#].*$/, '');
  if (!s || s.length > 253) return null;
  const host = normalizeHost(s);
  if (!host || isIpLiteral(host.replace(/^\[|\]$/g, ''))) return null;
  const labels = host.split('.');
  if (labels.length < 2) return null;
  if (!labels.every((l) => /^(?!-)[a-z0-9-]{1,63}(?<!-)$/.test(l))) return null;
  if (!/^[a-z]|^xn--/.test(labels[labels.length - 1]!) || /^\d+$/.test(labels[labels.length - 1]!)) return null;
  return host;
}
