import { token } from '../token.ts';
import type { FormatRef } from './inventory.ts';

/** A creative of an account's library, as stored. */
export interface LibraryCreative {
  account_id: string;
  creative_id: string;
  name: string;
  format_id: FormatRef;
  assets: Record<string, Record<string, unknown>>;
  status: string;
  tags: string[];
}

/**
 * Read access to the creative library (one table, owned by the plugin that provides the port:
 * plugins/sales-creatives, where sync_creatives and list_creatives write and read it). The creative
 * agent's ad server builds serving tags from it and reports delivery of its creatives.
 */
export interface CreativeStorePort {
  /**
   * The account a reference names for `owner` (ProtocolError ACCOUNT_NOT_FOUND, 404, naming `field`).
   * null on a sandbox deployment for an `account_id` nobody created: storyboards name the accounts of
   * creatives they seeded by fixture ids, so such a reference narrows nothing (the caller's own
   * creatives, in any of its accounts).
   */
  accountId(owner: string, account: unknown, field: string): Promise<string | null>;
  /** `owner`'s creatives of these ids, in the account when one is given; foreign or unknown ids are absent. */
  find(owner: string, creativeIds: readonly string[], accountId?: string): Promise<LibraryCreative[]>;
}

export const CreativeStore = token<CreativeStorePort>('creative.store');

/**
 * The creative agent's side: the plugin owning the library attaches its store in init (the creative
 * agent starts first, since the seller validates format ids with it). Until then, or without a library
 * in the deployment, the ad server's tasks are not offered.
 */
export interface CreativeLibraryPort {
  attach(store: CreativeStorePort): void;
}

export const CreativeLibrary = token<CreativeLibraryPort>('creative.library');
