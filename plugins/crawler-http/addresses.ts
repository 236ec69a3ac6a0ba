import { isIPv4, isIPv6 } from 'node:net';

/**
 * IP address classification for the SSRF guard (SUPPLEMENT "Crawling"). Addresses are compared
 * as numbers, never as strings, so every textual form of one address classifies the same way.
 */

type V4Range = readonly [base: number, bits: number, label: string];

const v4 = (text: string): number => text.split('.').reduce((n, part) => n * 256 + Number(part), 0);

const BLOCKED_V4: readonly V4Range[] = [
  [v4('0.0.0.0'), 8, 'this network'],
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'carrier-grade NAT'],
  [v4('127.0.0.0'), 8, 'loopback'],
  [v4('169.254.0.0'), 16, 'link-local'],
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'IETF protocol assignments'],
  [v4('192.0.2.0'), 24, 'documentation'],
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'benchmarking'],
  [v4('198.51.100.0'), 24, 'documentation'],
  [v4('203.0.113.0'), 24, 'documentation'],
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved'],
];

function inV4(address: number, base: number, bits: number): boolean {
  if (bits === 0) return true;
  const size = 2 ** (32 - bits);
  return Math.floor(address / size) === Math.floor(base / size);
}

/** Why an IPv4 address (as a 32-bit number) is not public, or null when it is. */
function v4Reason(address: number): string | null {
  for (const [base, bits, label] of BLOCKED_V4) if (inV4(address, base, bits)) return label;
  return null;
}

/** Eight 16-bit groups of an IPv6 literal (a trailing dotted IPv4 is folded in). */
export function parseV6(text: string): number[] | null {
  let s = text.replace(/^\[|\]$/g, '').toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!isIPv6(s)) return null;
  // A trailing dotted IPv4 (`::ffff:127.0.0.1`) becomes two hex groups.
  const lastColon = s.lastIndexOf(':');
  const last = s.slice(lastColon + 1);
  if (last.includes('.')) {
    const n = v4(last);
    s = `${s.slice(0, lastColon + 1)}${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  }
  const [head, rest] = s.includes('::') ? s.split('::') : [s, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((h) => parseInt(h, 16)) : []);
  const left = parse(head);
  const right = parse(rest);
  const missing = 8 - left.length - right.length;
  if (rest === undefined && missing !== 0) return null;
  const groups = [...left, ...new Array(Math.max(0, missing)).fill(0), ...right];
  return groups.length === 8 ? groups : null;
}

const groupsToV4 = (hi: number, lo: number) => hi * 65536 + lo;

/** Why an IPv6 address is not public (embedded IPv4 forms are checked as IPv4), or null. */
function v6Reason(g: number[]): string | null {
  const zeroPrefix = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (g.every((x) => x === 0)) return 'unspecified';
  if (zeroPrefix(7) && g[7] === 1) return 'loopback';
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, deprecated), ::ffff:0:a.b.c.d (SIIT): judge the IPv4 inside.
  if (zeroPrefix(5) && g[5] === 0xffff) return embedded('IPv4-mapped', groupsToV4(g[6]!, g[7]!));
  if (zeroPrefix(6)) return embedded('IPv4-compatible', groupsToV4(g[6]!, g[7]!));
  if (zeroPrefix(4) && g[4] === 0xffff && g[5] === 0) return embedded('IPv4-translated', groupsToV4(g[6]!, g[7]!));
  // NAT64 well-known prefix 64:ff9b::/96 and the local-use 64:ff9b:1::/48.
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded('NAT64', groupsToV4(g[6]!, g[7]!));
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'NAT64 local-use';
  // 6to4 2002:V4ADDR::/48.
  if (g[0] === 0x2002) return embedded('6to4', groupsToV4(g[1]!, g[2]!));
  // Teredo hides an obfuscated IPv4: refuse the prefix outright.
  if (g[0] === 0x2001 && g[1] === 0) return 'Teredo';
  if (g[0] === 0x2001 && g[1] === 0xdb8) return 'documentation';
  if (g[0] === 0x100 && zeroPrefix(4)) return 'discard-only';
  if ((g[0]! & 0xfe00) === 0xfc00) return 'unique local';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'site-local';
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  return null;
}

function embedded(form: string, address: number): string | null {
  const reason = v4Reason(address);
  return reason ? `${form} ${reason}` : null;
}

/** Why an IP literal is not a public unicast address, or null when it is public. Non-IPs -> 'not an IP'. */
export function blockedReason(ip: string): string | null {
  if (isIPv4(ip)) return v4Reason(v4(ip));
  const groups = parseV6(ip);
  if (groups) return v6Reason(groups);
  return 'not an IP address';
}

export function isIpLiteral(host: string): boolean {
  return isIPv4(host) || parseV6(host) !== null;
}

/** `a.b.c.d/n` or `x::y/n` (a bare address is a /32 or /128). */
export interface Cidr {
  family: 4 | 6;
  groups: number[];
  bits: number;
}

export function parseCidr(text: string): Cidr | null {
  const [addr, bitsText] = text.split('/');
  if (!addr) return null;
  if (isIPv4(addr)) {
    const bits = bitsText === undefined ? 32 : Number(bitsText);
    if (!Number.isInteger(bits) || bits < 0 || bits > 32) return null;
    const n = v4(addr);
    return { family: 4, groups: [Math.floor(n / 65536), n % 65536], bits };
  }
  const groups = parseV6(addr);
  if (!groups) return null;
  const bits = bitsText === undefined ? 128 : Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > 128) return null;
  return { family: 6, groups, bits };
}

export function cidrContains(cidr: Cidr, ip: string): boolean {
  let groups: number[] | null;
  if (isIPv4(ip)) {
    if (cidr.family !== 4) return false;
    const n = v4(ip);
    groups = [Math.floor(n / 65536), n % 65536];
  } else {
    if (cidr.family !== 6) return false;
    groups = parseV6(ip);
    if (!groups) return false;
  }
  let remaining = cidr.bits;
  for (let i = 0; i < groups.length && remaining > 0; i++) {
    const take = Math.min(16, remaining);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if ((groups[i]! & mask) !== (cidr.groups[i]! & mask)) return false;
    remaining -= take;
  }
  return true;
}
