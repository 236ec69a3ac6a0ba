import { invalid } from '../../core/errors.ts';
import { normalizeAgentUrl } from '../../lib/urls.ts';
import { tryNormalizeDomain as normalizeDomain } from '../../lib/domain.ts';

export { normalizeAgentUrl, normalizeDomain };

export function agentUrlOrThrow(raw: string, field = 'agent_url'): string {
  const url = normalizeAgentUrl(raw);
  if (!url) throw invalid(`${field}: must be an absolute http(s) URL`, field);
  return url;
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
