import { toASCII } from 'tr46';

/** The URL cannot be signed or verified (ambiguous or malformed authority, bad scheme). */
export class TargetUriError extends Error {
  override name = 'TargetUriError';
}

export interface CanonicalTarget {
  /** `@target-uri`: scheme://authority/path?query, normalized. */
  targetUri: string;
  /** `@authority`: host[:port], normalized (default port dropped). */
  authority: string;
}

const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443' };
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** RFC 3986 section 5.2.4 remove_dot_segments; `//` stays `//` (an empty segment, not collapsed). */
export function removeDotSegments(path: string): string {
  let input = path;
  const out: string[] = [];
  while (input.length > 0) {
    if (input.startsWith('../')) input = input.slice(3);
    else if (input.startsWith('./')) input = input.slice(2);
    else if (input.startsWith('/./')) input = input.slice(2);
    else if (input === '/.') input = '/';
    else if (input.startsWith('/../')) {
      input = input.slice(3);
      out.pop();
    } else if (input === '/..') {
      input = '/';
      out.pop();
    } else if (input === '.' || input === '..') input = '';
    else {
      const next = input.indexOf('/', input.startsWith('/') ? 1 : 0);
      const segment = next === -1 ? input : input.slice(0, next);
      out.push(segment);
      input = next === -1 ? '' : input.slice(next);
    }
  }
  return out.join('');
}

/** Uppercase %xx, decode percent-encoded unreserved characters, percent-encode raw bytes that must not appear. */
function normalizePercent(path: string): string {
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    if (c === '%' && /^[0-9A-Fa-f]{2}$/.test(path.slice(i + 1, i + 3))) {
      const byte = parseInt(path.slice(i + 1, i + 3), 16);
      const ch = String.fromCharCode(byte);
      out += byte < 0x80 && UNRESERVED.test(ch) ? ch : `%${path.slice(i + 1, i + 3).toUpperCase()}`;
      i += 2;
    } else if (c.charCodeAt(0) > 0x7e || c.charCodeAt(0) <= 0x20 || c === '%') {
      // Raw non-ASCII, spaces, controls or a stray `%`: encode their UTF-8 bytes.
      const cp = path.codePointAt(i)!;
      const chars = String.fromCodePoint(cp);
      for (const b of new TextEncoder().encode(chars)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
      i += chars.length - 1;
    } else out += c;
  }
  return out;
}

function normalizeHost(raw: string): string {
  if (raw.startsWith('[')) {
    if (!raw.endsWith(']')) throw new TargetUriError('IPv6 literal missing closing bracket');
    const inner = raw.slice(1, -1);
    if (inner.includes('%')) throw new TargetUriError('IPv6 zone identifier in signed URL');
    if (!/^[0-9A-Fa-f:.]+$/.test(inner) || !inner.includes(':')) throw new TargetUriError('invalid IPv6 literal');
    return `[${inner.toLowerCase()}]`;
  }
  if (raw.length === 0) throw new TargetUriError('authority missing host');
  let host = raw;
  if (host.endsWith('.')) host = host.slice(0, -1); // one DNS root-label dot
  if (host.length === 0 || host.split('.').some((label) => label.length === 0)) throw new TargetUriError('empty DNS label in hostname');
  if (/%/.test(host)) throw new TargetUriError('percent-encoded hostname');
  const ascii = toASCII(host, { checkHyphens: false, checkBidi: true, checkJoiners: true, useSTD3ASCIIRules: true, transitionalProcessing: false });
  if (!ascii) throw new TargetUriError('hostname fails UTS-46 processing');
  if (ascii.endsWith('.') || ascii.split('.').some((l) => l.length === 0)) throw new TargetUriError('empty DNS label in hostname');
  return ascii;
}

/** Canonical `@target-uri` and `@authority` of an absolute http(s) URL (the profile's 8 steps). */
export function canonicalTarget(url: string): CanonicalTarget {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/s.exec(url);
  if (!m) throw new TargetUriError('not an absolute URL with an authority');
  const scheme = m[1]!.toLowerCase();
  if (!(scheme in DEFAULT_PORT)) throw new TargetUriError(`unsupported scheme ${scheme}`);
  let authority = m[2]!;
  if (authority.length === 0) throw new TargetUriError('empty authority');
  const at = authority.lastIndexOf('@');
  if (at !== -1) authority = authority.slice(at + 1);
  let hostPart: string;
  let port = '';
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close === -1) throw new TargetUriError('IPv6 literal missing closing bracket');
    hostPart = authority.slice(0, close + 1);
    const rest = authority.slice(close + 1);
    if (rest) {
      if (!rest.startsWith(':')) throw new TargetUriError('garbage after IPv6 literal');
      port = rest.slice(1);
    }
  } else {
    const colons = authority.split(':').length - 1;
    if (colons > 1) throw new TargetUriError('IPv6 literal not bracketed');
    [hostPart, port = ''] = authority.split(':') as [string, string?];
  }
  if (port && !/^\d{1,5}$/.test(port)) throw new TargetUriError('invalid port');
  const host = normalizeHost(hostPart);
  if (port) port = String(Number(port));
  const hostPort = port && port !== DEFAULT_PORT[scheme] ? `${host}:${port}` : host;
  const rawPath = m[3] || '/';
  const path = removeDotSegments(normalizePercent(rawPath.startsWith('/') ? rawPath : `/${rawPath}`)) || '/';
  const query = m[4] ?? '';
  return { targetUri: `${scheme}://${hostPort}${path}${query}`, authority: hostPort };
}
