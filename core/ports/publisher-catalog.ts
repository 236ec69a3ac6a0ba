import { token } from '../token.ts';

/** An identifier as publishers declare it (`{type: 'domain', value: 'example.com'}`). */
export interface CatalogIdentifier {
  type: string;
  value: string;
}

/** A publisher's property as the registry holds it (from its adagents.json or a hosted entry). */
export interface CatalogProperty {
  publisher_domain: string;
  /** The publisher's property_id, when the file gives one. */
  property_id: string | null;
  property_type: string;
  name: string;
  identifiers: CatalogIdentifier[];
  tags: string[];
  channels: string[];
}

/** A publisher's collection (show, series, podcast) with its distribution identifiers. */
export interface CatalogCollection {
  /** Stable registry id. */
  collection_rid: string;
  publisher_domain: string;
  collection_id: string;
  name: string;
  kind: string | null;
  distribution_ids: CatalogIdentifier[];
  genres: string[];
  genre_taxonomy: string | null;
  content_rating: { system: string; rating: string } | null;
  production_quality: string | null;
}

/**
 * Read-only lookups of publishers' properties and collections held by the registry, for agents
 * that resolve lists against them (property and collection lists of the governance agent).
 * Only active records are answered (stale, removed and merged ones are not). Identifier values
 * and publisher domains compare case-insensitively; unknown publishers answer an empty list.
 * Every method answers at most `limit` records (the registry is large; callers bound what they resolve).
 */
export interface PublisherCatalogPort {
  /** Properties of `publisherDomain` carrying any of `tags`. */
  propertiesByTags(publisherDomain: string, tags: readonly string[], limit: number): Promise<CatalogProperty[]>;
  /** Properties of `publisherDomain` whose property_id is one of `propertyIds`. */
  propertiesByIds(publisherDomain: string, propertyIds: readonly string[], limit: number): Promise<CatalogProperty[]>;
  /** Properties, of any publisher, carrying one of `identifiers`. */
  propertiesByIdentifiers(identifiers: readonly CatalogIdentifier[], limit: number): Promise<CatalogProperty[]>;
  /** Collections of `publisherDomain` whose collection_id is one of `collectionIds`. */
  collectionsByIds(publisherDomain: string, collectionIds: readonly string[], limit: number): Promise<CatalogCollection[]>;
  /** Collections, of any publisher, carrying one of the distribution `identifiers`. */
  collectionsByDistributionIds(identifiers: readonly CatalogIdentifier[], limit: number): Promise<CatalogCollection[]>;
  /** Collections of `publisherDomain` with one of `genres` (case-insensitive). */
  collectionsByGenres(publisherDomain: string, genres: readonly string[], limit: number): Promise<CatalogCollection[]>;
}

export const PublisherCatalog = token<PublisherCatalogPort>('registry.publisher-catalog');
