import { invalid } from '../../core/errors.ts';

/**
 * One agent, one row: lowercase scheme and host (URL does that), default port dropped, fragment
 * dropped, trailing slashes removed from the path. Returns null for anything that is not an
 * absolute http(s) URL without credentials.
 */
export function normalizeAgentUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.username || url.password || !url.hostname) return null;
  const host = url.hostname.replace(/\.$/, '');
  const port = url.port ? `:${url.port}` : '';
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${host}${port}${path}${url.search}`;
}

export function agentUrlOrThrow(raw: string, field = 'agent_url'): string {
  const url = normalizeAgentUrl(raw);
  if (!url) throw invalid(`${field}: must be an absolute http(s) URL`, field);
  return url;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lowercased ASCII (IDNA) host name: protocol, path, port and trailing dot stripped; null when invalid. */
export function normalizeDomain(raw: string): string | null {
  let text = raw.trim().toLowerCase();
  if (!text || text.length > 300) return null;
  text = text.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  text = text.split(/[/?#]/, 1)[0]!.replace(/:\d+$/, '').replace(/\.$/, '');
  let host: string;
  try {
    host = new URL(`http://${text}`).hostname;
  } catch {
    return null;
  }
  const labels = host.split('.');
  if (labels.length < 2 || host.length > 253 || !labels.every((l) => LABEL.test(l))) return null;
  if (/^\d+$/.test(labels[labels.length - 1]!)) return null; // an IP address is not a domain
  return host;
}

export function domainOrThrow(raw: string, field = 'domain'): string {
  const domain = normalizeDomain(raw);
  if (!domain) throw invalid(`${field}: must be a valid domain name (e.g. example.com)`, field);
  return domain;
}

/**
 * Stored identifier values that match a looked-up one. For domains (property.json): a stored
 * `example.com` covers `www.` and `m.`; a stored `*.example.com` covers every subdomain but not the base.
 */
export function identifierCandidates(type: string, value: string): string[] {
  const v = value.trim().toLowerCase();
  if (type !== 'domain') return [v];
  const out = new Set([v, v.replace(/^(www|m)\./, '')]);
  const labels = v.split('.');
  for (let i = 1; i < labels.length - 1; i++) out.add(`*.${labels.slice(i).join('.')}`);
  return [...out];
}
