import type { CatalogCollection, CatalogIdentifier, PublisherCatalogPort } from '../../core/ports/publisher-catalog.ts';
import type { Json } from '../../core/task.ts';
import { CATALOG_LIMIT, keyOf, MAX_RESOLVED, type Resolution } from './resolution.ts';
import { DISTRIBUTION_ID_TYPES, type BaseCollectionSource, type CollectionFilters } from './schemas.ts';

interface Candidate {
  /** The literal distribution identifier a source named, when the registry does not hold it. */
  literal?: CatalogIdentifier;
  known?: CatalogCollection;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(DISTRIBUTION_ID_TYPES);

async function candidatesOf(source: BaseCollectionSource, catalog: PublisherCatalogPort | undefined): Promise<Candidate[]> {
  if (source.selection_type === 'distribution_ids') {
    const known = catalog ? await catalog.collectionsByDistributionIds(source.identifiers, CATALOG_LIMIT) : [];
    const byKey = new Map<string, CatalogCollection>();
    for (const c of known) for (const i of c.distribution_ids) byKey.set(keyOf(i), c);
    return source.identifiers.map((i) => {
      const k = byKey.get(keyOf(i));
      return k ? { known: k } : { literal: i };
    });
  }
  if (!catalog) return [];
  const found =
    source.selection_type === 'publisher_collections'
      ? await catalog.collectionsByIds(source.publisher_domain, source.collection_ids, CATALOG_LIMIT)
      : await catalog.collectionsByGenres(source.publisher_domain, source.genres, CATALOG_LIMIT);
  return found.map((known) => ({ known }));
}

/** A resolved collection as get-collection-list-response `collections[]` shows it. */
function entryOf(c: Candidate): { key: string; entry: Json } {
  if (c.literal) {
    return {
      key: keyOf(c.literal),
      entry: { name: `${c.literal.type} ${c.literal.value}`, distribution_ids: [{ type: c.literal.type, value: c.literal.value }] },
    };
  }
  const k = c.known!;
  const entry: Json = {
    collection_rid: k.collection_rid,
    name: k.name,
    distribution_ids: k.distribution_ids.filter((i) => KNOWN_TYPES.has(i.type)).map((i) => ({ type: i.type, value: i.value })),
  };
  if (k.content_rating) entry.content_rating = { system: k.content_rating.system, rating: k.content_rating.rating };
  if (k.genres.length) entry.genre = k.genres;
  if (k.genre_taxonomy) entry.genre_taxonomy = k.genre_taxonomy;
  if (k.kind) entry.kind = k.kind;
  return { key: `rid:${k.collection_rid}`, entry };
}

const lower = (xs: readonly string[]) => new Set(xs.map((x) => x.toLowerCase()));
const ratingKey = (r: { system: string; rating: string }) => `${r.system}:${r.rating.toLowerCase()}`;

/**
 * Resolve a collection list: literal distribution ids as given (with the registry's record when it
 * holds one), publisher collections and genres through the registry. Filters judged on what the
 * registry knows: kinds, genres_include/exclude, content_ratings_include/exclude, production_quality; a collection it
 * does not know is kept and reported in `gaps` under the filter's name. exclude_distribution_ids
 * always applies; production_quality too, on what the registry knows.
 */
export async function resolveCollections(
  sources: readonly BaseCollectionSource[] | null,
  filters: CollectionFilters | null,
  catalog: PublisherCatalogPort | undefined,
): Promise<Resolution> {
  const candidates: Candidate[] = [];
  for (const s of sources ?? []) candidates.push(...(await candidatesOf(s, catalog)));
  const f = filters ?? {};
  const excludedIds = new Set((f.exclude_distribution_ids ?? []).map(keyOf));
  const kinds = f.kinds ? new Set<string>(f.kinds) : null;
  const genresIn = f.genres_include ? lower(f.genres_include) : null;
  const genresOut = f.genres_exclude ? lower(f.genres_exclude) : null;
  const ratingsIn = f.content_ratings_include ? new Set(f.content_ratings_include.map(ratingKey)) : null;
  const ratingsOut = f.content_ratings_exclude ? new Set(f.content_ratings_exclude.map(ratingKey)) : null;
  const quality = f.production_quality ? new Set<string>(f.production_quality) : null;
  const out: Resolution = { items: [], keys: [], gaps: {} };
  const seen = new Set<string>();
  for (const c of candidates) {
    const ids = c.literal ? [c.literal] : c.known!.distribution_ids;
    if (ids.some((i) => excludedIds.has(keyOf(i)))) continue;
    const { key, entry } = entryOf(c);
    if (seen.has(key)) continue;
    const k = c.known;
    // Filters no data could judge for this collection (reported once it is in the list).
    const unjudged: string[] = [];
    const gap = (name: string) => unjudged.push(name);
    if (kinds) {
      if (!k?.kind) gap('kinds');
      else if (!kinds.has(k.kind)) continue;
    }
    const genres = k ? k.genres.map((g) => g.toLowerCase()) : [];
    if (genresIn) {
      if (!genres.length) gap('genres_include');
      else if (!genres.some((g) => genresIn.has(g))) continue;
    }
    if (genresOut) {
      if (!genres.length) gap('genres_exclude');
      else if (genres.some((g) => genresOut.has(g))) continue;
    }
    const rating = k?.content_rating ? ratingKey(k.content_rating) : null;
    if (ratingsIn) {
      if (!rating) gap('content_ratings_include');
      else if (!ratingsIn.has(rating)) continue;
    }
    if (ratingsOut) {
      if (!rating) gap('content_ratings_exclude');
      else if (ratingsOut.has(rating)) continue;
    }
    if (quality) {
      if (!k?.production_quality) gap('production_quality');
      else if (!quality.has(k.production_quality)) continue;
    }
    if (out.items.length >= MAX_RESOLVED) break;
    seen.add(key);
    out.items.push(entry);
    out.keys.push(key);
    for (const name of unjudged) (out.gaps[name] ??= []).push(...(entry.distribution_ids as Json[]));
  }
  return out;
}
