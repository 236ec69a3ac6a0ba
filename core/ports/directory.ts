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
 * Case-insensitive substring search over one plugin's entries (their names, and what else the
 * plugin indexes), for `GET /api/search`. `term` is lower-case and literal (`%` and `_` are
 * characters, not wildcards). At most `limit` results, in a stable order: a smaller limit answers
 * a prefix of a larger one. Contract: test/contract/directory.contract.ts.
 */
export interface DirectoryPort<T> {
  search(term: string, limit: number): Promise<T[]>;
}

export const BrandDirectory = token<DirectoryPort<BrandMatch>>('registry.brand-directory');
export const PropertyDirectory = token<DirectoryPort<PropertyMatch>>('registry.property-directory');
