import { token } from '../token.ts';

/** What a creative needs to know about a brand: its name, colours and logo. */
export interface BrandIdentity {
  /** The brand's domain as resolved (ASCII, lower-case). */
  domain: string;
  name: string;
  /** `#RRGGBB` values; any may be missing. */
  colors: { primary?: string; secondary?: string; accent?: string };
  /** An http(s) URL of the logo, when the brand declares one. */
  logo_url?: string;
  /** Font family names by role (brand.json `fonts`), when declared; plain names, safe in CSS. */
  fonts?: { primary?: string; secondary?: string };
  /** The brand's tagline, when declared. */
  tagline?: string;
}

/**
 * Brand resolution by domain (`brand: {domain}` in build_creative). Adapters: the brand registry
 * of the same deployment (plugins/registry-brands) and the creative plugin's client of a registry
 * at a configured URL (`GET /api/brands/resolve?domain=`).
 * Contract: `resolve` answers null when the registry does not know the domain; it throws only
 * when the registry cannot be asked (unreachable, malformed answer), so callers may retry.
 */
export interface BrandLookupPort {
  /** `slow`: asked over the network (builds that need it run asynchronously, retried); absent: a local read. */
  readonly latency?: 'fast' | 'slow';
  resolve(domain: string): Promise<BrandIdentity | null>;
}

export const BrandLookup = token<BrandLookupPort>('core.brand-lookup');
