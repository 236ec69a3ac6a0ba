import * as v from 'valibot';
import type { PublisherCatalogPort } from '../../core/ports/publisher-catalog.ts';
import type { Resolution } from './resolution.ts';
import type { ListKind } from './store.ts';
import { resolveProperties } from './resolve-properties.ts';
import { resolveCollections } from './resolve-collections.ts';
import { baseCollectionSource, basePropertySource, collectionFilters, propertyFilters, type BaseCollectionSource, type BasePropertySource } from './schemas.ts';

/** What differs between property lists and collection lists; the tasks are written once over it. */
export interface KindSpec {
  kind: ListKind;
  /** `property_list` / `collection_list`: task names are `create_${noun}` ... `list_${noun}s`. */
  noun: string;
  /** Request and list member holding the sources. */
  sourcesField: 'base_properties' | 'base_collections';
  /** List member counting resolved entries. */
  countField: 'property_count' | 'collection_count';
  /** get_*_list member holding resolved entries. */
  itemsField: 'identifiers' | 'collections';
  /** The list object's cache_duration_hours (the schemas' defaults). */
  cacheHours: number;
  /** Webhook event and change_summary member names. */
  event: string;
  summary: { added: string; removed: string; total: string };
  /** Folder of the AdCP request schemas (`property`, `collection`). */
  schemaDir: string;
  /** Prefix of list ids. */
  idPrefix: string;
  sources: v.GenericSchema<unknown, unknown[]>;
  filters: v.GenericSchema<unknown, Record<string, unknown>>;
  resolve(sources: unknown[] | null, filters: Record<string, unknown> | null, catalog: PublisherCatalogPort | undefined): Promise<Resolution>;
}

const sourceList = <T extends v.GenericSchema>(item: T) =>
  v.pipe(v.array(item, 'must be an array of sources'), v.minLength(1, 'must not be empty'), v.maxLength(100, 'accepts at most 100 sources'));

export const PROPERTY: KindSpec = {
  kind: 'property',
  noun: 'property_list',
  sourcesField: 'base_properties',
  countField: 'property_count',
  itemsField: 'identifiers',
  cacheHours: 24,
  event: 'property_list_changed',
  summary: { added: 'properties_added', removed: 'properties_removed', total: 'total_properties' },
  schemaDir: 'property',
  idPrefix: 'pl_',
  sources: sourceList(basePropertySource),
  filters: propertyFilters,
  resolve: (sources, filters, catalog) => resolveProperties(sources as BasePropertySource[] | null, filters, catalog),
};

export const COLLECTION: KindSpec = {
  kind: 'collection',
  noun: 'collection_list',
  sourcesField: 'base_collections',
  countField: 'collection_count',
  itemsField: 'collections',
  cacheHours: 168,
  event: 'collection_list_changed',
  summary: { added: 'collections_added', removed: 'collections_removed', total: 'total_collections' },
  schemaDir: 'collection',
  idPrefix: 'cl_',
  sources: sourceList(baseCollectionSource),
  filters: collectionFilters,
  resolve: (sources, filters, catalog) => resolveCollections(sources as BaseCollectionSource[] | null, filters, catalog),
};
