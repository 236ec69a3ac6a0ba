import { token } from '../token.ts';

export type InventoryListKind = 'property' | 'collection';

/** A list's resolved entries as get_property_list / get_collection_list answer them. */
export interface ListEntries {
  /** Property lists: `identifiers[]` ({type, value}); collection lists: `collections[]`. */
  items: Array<Record<string, unknown>>;
}

/**
 * Property and collection lists kept by a governance agent of this deployment, read in process by
 * agents that honour list references (a seller's targeting) instead of calling the agent over the
 * network. A reader gets a list it owns (its organization's) or one whose auth_token it presents;
 * anything else, like an unknown id, is null.
 */
export interface ListReaderPort {
  read(kind: InventoryListKind, listId: string, reader: { orgId: string; token?: string }): Promise<ListEntries | null>;
}

export const ListReader = token<ListReaderPort>('governance.list-reader');
