import * as v from 'valibot';
import { domain, versionFields } from '../../lib/adcp/request-fields.ts';

export { domain, versionFields };
import { CHANNELS } from '../../lib/adcp/channels.ts';
import { IDENTIFIER_TYPES, PROPERTY_TYPES } from '../../lib/adcp/property-vocabularies.ts';

const text = (max: number) => v.pipe(v.string('must be a string'), v.maxLength(max, `must be at most ${max} characters`));
const nonEmpty = (max: number) =>
  v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`));
const list = <T extends v.GenericSchema>(item: T, max: number) =>
  v.pipe(v.array(item, 'must be an array'), v.minLength(1, 'must not be empty'), v.maxLength(max, `accepts at most ${max} entries`));

export const listId = v.pipe(v.string('must be a string'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'));
export const listName = nonEmpty(256);
export const listDescription = text(2000);

/**
 * core/brand-ref.json. Lists keep (and show) the members both versions define: domain, brand_id,
 * industries; brand_kit_override (3.1 only) and data_subject_contestation are accepted, not kept.
 */
export const brandRef = v.pipe(
  v.strictObject(
    {
      domain,
      brand_id: v.optional(nonEmpty(128)),
      industries: v.optional(v.pipe(v.array(nonEmpty(128), 'must be an array of strings'), v.maxLength(50, 'accepts at most 50 industries'))),
      brand_kit_override: v.optional(v.unknown()),
      data_subject_contestation: v.optional(v.unknown()),
    },
    'must be an object {domain}',
  ),
  v.transform(({ domain, brand_id, industries }) => ({ domain, ...(brand_id ? { brand_id } : {}), ...(industries ? { industries } : {}) })),
);

/** `{account_id}` or `{brand: {domain}, operator, sandbox?}` (core/account-ref.json). */
export const accountRef = v.union(
  [v.strictObject({ account_id: nonEmpty(128) }), v.strictObject({ brand: brandRef, operator: domain, sandbox: v.optional(v.boolean()) })],
  'must be {account_id} or {brand: {domain}, operator}',
);
export type AccountRef = v.InferOutput<typeof accountRef>;

/** Distribution identifier types of 3.0.6 (3.1 adds youtube_channel_handle and youtube_channel_url). */
export const DISTRIBUTION_ID_TYPES = [
  'apple_podcast_id',
  'spotify_collection_id',
  'rss_url',
  'podcast_guid',
  'amazon_music_id',
  'iheart_id',
  'podcast_index_id',
  'youtube_channel_id',
  'youtube_channel_handle',
  'youtube_channel_url',
  'youtube_playlist_id',
  'amazon_title_id',
  'roku_channel_id',
  'pluto_channel_id',
  'tubi_id',
  'peacock_id',
  'tiktok_id',
  'twitch_channel',
  'imdb_id',
  'gracenote_id',
  'eidr_id',
  'domain',
  'substack_id',
] as const;
const COLLECTION_KINDS = ['series', 'publication', 'event_series', 'rotation'] as const;
const GENRE_TAXONOMIES = [
  'iab_content_3.0',
  'iab_content_2.2',
  'gracenote',
  'eidr',
  'apple_genres',
  'google_genres',
  'roku',
  'amazon_genres',
  'custom',
] as const;
const RATING_SYSTEMS = ['tv_parental', 'mpaa', 'podcast', 'esrb', 'bbfc', 'fsk', 'acb', 'chvrs', 'csa', 'pegi', 'custom'] as const;
const PRODUCTION_QUALITY = ['professional', 'prosumer', 'ugc'] as const;

const oneOf = <T extends readonly string[]>(values: T, what: string) => v.picklist(values, `must be a known ${what}`);

/** core/identifier.json */
export const identifier = v.strictObject({ type: oneOf(IDENTIFIER_TYPES, 'identifier type'), value: nonEmpty(2048) }, 'must be {type, value}');
export type Identifier = v.InferOutput<typeof identifier>;
const distributionId = v.strictObject({ type: oneOf(DISTRIBUTION_ID_TYPES, 'distribution identifier type'), value: nonEmpty(2048) }, 'must be {type, value}');
const tag = v.pipe(v.string('must be a string'), v.regex(/^[a-z0-9_]{1,128}$/, 'must match ^[a-z0-9_]+$'));

/** property/base-property-source.json */
export const basePropertySource = v.variant(
  'selection_type',
  [
    v.strictObject({ selection_type: v.literal('publisher_tags'), publisher_domain: domain, tags: list(tag, 100) }),
    v.strictObject({ selection_type: v.literal('publisher_ids'), publisher_domain: domain, property_ids: list(tag, 1000) }),
    v.strictObject({ selection_type: v.literal('identifiers'), identifiers: list(identifier, 10_000) }),
  ],
  'must be a source with selection_type publisher_tags, publisher_ids or identifiers',
);
export type BasePropertySource = v.InferOutput<typeof basePropertySource>;

const featureRequirement = v.looseObject({ feature_id: nonEmpty(128) });

/** property/property-list-filters.json */
export const propertyFilters = v.strictObject({
  countries_all: v.optional(list(v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code')), 250)),
  channels_any: v.optional(list(oneOf(CHANNELS, 'channel'), CHANNELS.length)),
  property_types: v.optional(list(oneOf(PROPERTY_TYPES, 'property type'), PROPERTY_TYPES.length)),
  feature_requirements: v.optional(list(featureRequirement, 50)),
  exclude_identifiers: v.optional(list(identifier, 10_000)),
});
export type PropertyFilters = v.InferOutput<typeof propertyFilters>;

/** collection/base-collection-source.json */
export const baseCollectionSource = v.variant(
  'selection_type',
  [
    v.strictObject({ selection_type: v.literal('distribution_ids'), identifiers: list(distributionId, 10_000) }),
    v.strictObject({ selection_type: v.literal('publisher_collections'), publisher_domain: domain, collection_ids: list(nonEmpty(256), 1000) }),
    v.strictObject({
      selection_type: v.literal('publisher_genres'),
      publisher_domain: domain,
      genres: list(nonEmpty(256), 100),
      genre_taxonomy: oneOf(GENRE_TAXONOMIES, 'genre taxonomy'),
    }),
  ],
  'must be a source with selection_type distribution_ids, publisher_collections or publisher_genres',
);
export type BaseCollectionSource = v.InferOutput<typeof baseCollectionSource>;

const contentRating = v.strictObject({ system: oneOf(RATING_SYSTEMS, 'rating system'), rating: nonEmpty(64) });

/** collection/collection-list-filters.json */
export const collectionFilters = v.strictObject({
  content_ratings_exclude: v.optional(list(contentRating, 100)),
  content_ratings_include: v.optional(list(contentRating, 100)),
  genres_exclude: v.optional(list(nonEmpty(256), 100)),
  genres_include: v.optional(list(nonEmpty(256), 100)),
  genre_taxonomy: v.optional(oneOf(GENRE_TAXONOMIES, 'genre taxonomy')),
  kinds: v.optional(list(oneOf(COLLECTION_KINDS, 'collection kind'), COLLECTION_KINDS.length)),
  exclude_distribution_ids: v.optional(list(distributionId, 10_000)),
  production_quality: v.optional(list(oneOf(PRODUCTION_QUALITY, 'production quality'), PRODUCTION_QUALITY.length)),
});
export type CollectionFilters = v.InferOutput<typeof collectionFilters>;

/** core/pagination-request.json */
export const pagination = v.strictObject({
  max_results: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(100, 'must be at most 100'))),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(512))),
});

/** get_*_list pagination of resolved entries (higher limits: lists can hold tens of thousands). */
export const resolvedPagination = v.strictObject({
  max_results: v.optional(
    v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(10_000, 'must be at most 10000')),
  ),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(512))),
});

/** A webhook URL: absolute http(s); the empty string removes the registration (update). */
export const webhookUrl = v.union(
  [v.literal(''), v.pipe(v.string(), v.maxLength(2048), v.url('must be an absolute URL'), v.regex(/^https?:\/\//i, 'must be an http(s) URL'))],
  'must be an absolute http(s) URL, or "" to remove it',
);

/** The auth_token a list's sellers present, instead of (or besides) their own credential. */
export const listToken = v.pipe(v.string('must be a string'), v.minLength(16, 'must be at least 16 characters'), v.maxLength(256));
