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
