import { sql, type SqlFragment } from '../../core/sql.ts';
import type { DatabasePort } from '../../core/ports/database.ts';
import type { CatalogCollection, CatalogIdentifier, CatalogProperty, PublisherCatalogPort } from '../../core/ports/publisher-catalog.ts';

type Json = Record<string, unknown>;

interface PropertyRow {
  publisher_domain: string;
  property_id: string | null;
  property_type: string;
  name: string;
  identifiers: CatalogIdentifier[];
  tags: string[];
  channels: string[];
}

interface CollectionRow {
  collection_rid: string;
  publisher_domain: string;
  collection_id: string;
  name: string;
  kind: string | null;
  data: Json;
  distribution_ids: CatalogIdentifier[] | null;
}

const strings = (x: unknown): string[] => (Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : []);
const lowered = (xs: readonly string[]) => xs.map((x) => x.toLowerCase());
const pairs = (ids: readonly CatalogIdentifier[]) => ({ types: ids.map((i) => i.type), values: lowered(ids.map((i) => i.value)) });

function collectionOf(r: CollectionRow): CatalogCollection {
  const rating = r.data.content_rating as Json | undefined;
  return {
    collection_rid: r.collection_rid,
    publisher_domain: r.publisher_domain,
    collection_id: r.collection_id,
    name: r.name,
    kind: r.kind,
    distribution_ids: r.distribution_ids ?? [],
    genres: strings(r.data.genre),
    genre_taxonomy: typeof r.data.genre_taxonomy === 'string' ? r.data.genre_taxonomy : null,
    content_rating: rating && typeof rating.system === 'string' && typeof rating.rating === 'string' ? { system: rating.system, rating: rating.rating } : null,
    production_quality: typeof r.data.production_quality === 'string' ? r.data.production_quality : null,
  };
}

/**
 * The PublisherCatalog port over the registry's projection of crawled adagents.json files:
 * active properties (registry_properties) and active collections (registry_collections) with
 * their identifier indexes. Identifier values are indexed lowercased.
 */
export function publisherCatalog(db: DatabasePort): PublisherCatalogPort {
  const properties = async (where: SqlFragment, limit: number): Promise<CatalogProperty[]> =>
    db.query<PropertyRow>(sql`
      SELECT pub.domain AS publisher_domain, p.property_id, p.property_type, p.name, p.identifiers, p.tags, p.channels
      FROM registry_properties p JOIN registry_publishers pub ON pub.id = p.publisher_id
      WHERE p.status = 'active' AND ${where}
      ORDER BY pub.domain, p.property_key LIMIT ${limit}::integer`);
  const collections = async (where: SqlFragment, limit: number): Promise<CatalogCollection[]> => {
    const rows = await db.query<CollectionRow>(sql`
      SELECT c.id::text AS collection_rid, pub.domain AS publisher_domain, c.collection_id, c.name, c.kind, c.data,
        (SELECT jsonb_agg(DISTINCT jsonb_build_object('type', i.type, 'value', i.value)) FROM registry_collection_identifiers i WHERE i.collection_rid = c.id)
          AS distribution_ids
      FROM registry_collections c JOIN registry_publishers pub ON pub.id = c.publisher_id
      WHERE c.status = 'active' AND ${where}
      ORDER BY pub.domain, c.collection_id LIMIT ${limit}::integer`);
    return rows.map(collectionOf);
  };
  return {
    propertiesByTags: (domain, tags, limit) => properties(sql`pub.domain = ${domain.toLowerCase()}::text AND p.tags && ${[...tags]}::text[]`, limit),
    propertiesByIds: (domain, ids, limit) => properties(sql`pub.domain = ${domain.toLowerCase()}::text AND p.property_id = ANY(${[...ids]}::text[])`, limit),
    propertiesByIdentifiers(ids, limit) {
      const { types, values } = pairs(ids);
      return properties(
        sql`EXISTS (SELECT 1 FROM registry_property_identifiers i WHERE i.property_id = p.id
          AND (i.type, i.value) IN (SELECT * FROM unnest(${types}::text[], ${values}::text[])))`,
        limit,
      );
    },
    collectionsByIds: (domain, ids, limit) =>
      collections(sql`pub.domain = ${domain.toLowerCase()}::text AND c.collection_id = ANY(${[...ids]}::text[])`, limit),
    collectionsByDistributionIds(ids, limit) {
      const { types, values } = pairs(ids);
      return collections(
        sql`EXISTS (SELECT 1 FROM registry_collection_identifiers i WHERE i.collection_rid = c.id
          AND (i.type, i.value) IN (SELECT * FROM unnest(${types}::text[], ${values}::text[])))`,
        limit,
      );
    },
    collectionsByGenres: (domain, genres, limit) =>
      collections(
        sql`pub.domain = ${domain.toLowerCase()}::text AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(c.data->'genre') = 'array'
          THEN c.data->'genre' ELSE '[]'::jsonb END) g WHERE lower(g) = ANY(${lowered(genres)}::text[]))`,
        limit,
      ),
  };
}
