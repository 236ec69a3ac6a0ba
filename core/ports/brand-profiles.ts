import { token } from '../token.ts';

/** A logo as get_brand_identity answers it. */
export interface BrandLogo {
  url: string;
  orientation?: string;
  background?: string;
  variant?: string;
  tags?: string[];
  width?: number;
  height?: number;
}

/** A property of a brand.json brand (`properties[]`). */
export interface PortfolioProperty {
  type: string;
  identifier: string;
  store?: string;
  region?: string;
  /** `owned` (default), `direct`, `delegated` or `ad_network`. */
  relationship: string;
}

/** A registered trademark of a brand.json house or brand (`trademarks[]`). */
export interface PortfolioTrademark {
  registry: string;
  number: string;
  mark: string;
  /** `active` (default), `pending`, `abandoned`, `cancelled`, `expired`. */
  status: string;
  /** `owned` (default), `licensed_in`, `licensed_out`. */
  license_type: string;
  licensor_domain?: string;
  countries?: string[];
  nice_classes?: number[];
}

/** A brand of a house portfolio: inline (`brands[]`, data here) or a pointer (`brand_refs[]`, data at its domain). */
export interface PortfolioBrand {
  brand_id?: string;
  /** Domains the brand stands for (its url's host, `domains[]`, a ref's domain), ASCII lower-case. */
  domains: string[];
  parent_brand?: string;
  properties: PortfolioProperty[];
  trademarks: PortfolioTrademark[];
  /** Present for `brand_refs[]` entries: when the house established the ownership claim. */
  ref?: { effective_at?: string };
}

/** The house portfolio of an authoritative brand.json: what verification questions are answered from. */
export interface BrandPortfolio {
  house_domain: string;
  brands: PortfolioBrand[];
  /** House-level (corporate) trademarks. */
  trademarks: PortfolioTrademark[];
}

/**
 * Everything the registry knows of a brand's identity, from its brand.json (authoritative), a
 * community or enriched entry's `brand_manifest`, in the shape of get-brand-identity-response.
 * Members the source does not give are absent.
 */
export interface BrandProfile {
  /** The registry key (ASCII, lower-case). */
  domain: string;
  /** `brand_json`, `community`, `enriched` or `hosted`. */
  source: string;
  /** The brand.json brand id, when the source has one. */
  brand_id?: string;
  name: string;
  /** Localized names: `[{en: "Acme"}]`. */
  names: Array<Record<string, string>>;
  house: { domain: string; name: string };
  keller_type?: 'master' | 'sub_brand' | 'endorsed' | 'independent';
  description?: string;
  industries?: string[];
  logos: BrandLogo[];
  /** `#RRGGBB` per role. */
  colors: Partial<Record<'primary' | 'secondary' | 'accent' | 'background' | 'text', string>>;
  fonts?: Record<string, unknown>;
  tone?: { voice?: string; attributes?: string[]; dos?: string[]; donts?: string[] };
  tagline?: string;
  /** The house portfolio, when the source is an authoritative brand.json (absent for community data). */
  portfolio?: BrandPortfolio;
}

/**
 * Brand identities by domain from the registry's brand data. Adapters: registry-brands (its own
 * entries, same deployment) and the brand-agent plugin's client of a registry at a URL.
 * Contract: null when the registry has no entry for the domain; throws only when the registry
 * cannot be asked.
 */
export interface BrandProfilesPort {
  get(domain: string): Promise<BrandProfile | null>;
}

export const BrandProfiles = token<BrandProfilesPort>('core.brand-profiles');
