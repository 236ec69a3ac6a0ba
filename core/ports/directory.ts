import { token } from '../token.ts';

/** A brand entry matching a site-wide search. */
export interface BrandMatch {
  domain: string;
  name: string;
  source: string;
}

/** A property matching a site-wide search. */
export interface PropertyMatch {
  publisher_domain: string;
  id: string;
  name: string;
  type: string;
  identifiers: Array<{ type: string; value: string }>;
  source: string;
}

/**
 * Case-insensitive substring search over one plugin's entries, for `GET /api/search`. `term` is
 * lower-case and literal (no wildcards); results are ordered and at most `limit`.
 */
export interface DirectoryPort<T> {
  search(term: string, limit: number): Promise<T[]>;
}

export const BrandDirectory = token<DirectoryPort<BrandMatch>>('registry.brand-directory');
export const PropertyDirectory = token<DirectoryPort<PropertyMatch>>('registry.property-directory');
