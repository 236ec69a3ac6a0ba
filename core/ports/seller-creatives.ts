import { token } from '../token.ts';
import type { Queryable } from './database.ts';
import type { FormatRef } from './inventory.ts';

/** A creative as a buyer uploads it (sync_creatives, or inline in a create_media_buy package). */
export interface CreativeUpload {
  creative_id: string;
  name: string;
  /** Checked by `prepare`: a structured `{agent_url, id}` of a format its creative agent defines. */
  format_id: unknown;
  assets: Record<string, Record<string, unknown>>;
  tags?: string[];
  weight?: number;
}

/** A creative whose format id was checked with its creative agent. */
export interface PreparedCreative {
  input: CreativeUpload;
  format: FormatRef;
  /** The format's comparison key (lib/adcp/format-ids.ts `formatKey`). */
  key: string;
}

/** A package a creative can be assigned to, as the media buys know it. */
export interface AssignablePackage {
  package_id: string;
  media_buy_id: string;
  /** Formats the package takes; empty: any. */
  format_ids: FormatRef[];
}

/**
 * The packages side of creative assignments, implemented by the media-buy plugin and attached to the
 * port (the creatives plugin does not depend on media buys; media buys depend on it).
 */
export interface CreativePackages {
  /** The packages of these ids in `owner`'s buys under `accountId`; unknown or foreign ids are absent. */
  find(q: Queryable, owner: string, accountId: string, packageIds: readonly string[]): Promise<Map<string, AssignablePackage>>;
  /** Throws the buy-state error (ProtocolError) when a buy's status takes no new assignments. */
  checkAssignable(q: Queryable, owner: string, mediaBuyIds: readonly string[]): Promise<void>;
  /** Assign (weight updated when assigned already), then move buys whose every package has creatives on to pending_start. */
  assign(
    tx: Queryable,
    accountId: string,
    assignments: ReadonlyArray<{ creative_id: string; package_id: string; weight?: number }>,
    actor: string,
    now: Date,
  ): Promise<void>;
  /** `account_id` and `creative_id` of `owner`'s assigned creatives, narrowed to these buys or packages when given. */
  assigned(
    q: Queryable,
    owner: string,
    filter: { mediaBuyIds?: readonly string[]; packageIds?: readonly string[] },
  ): Promise<Array<{ account_id: string; creative_id: string }>>;
  /** The assignments of these creatives of one account, by creative id, oldest first. */
  assignmentsOf(q: Queryable, accountId: string, creativeIds: readonly string[]): Promise<Map<string, Array<{ package_id: string; assigned_at: Date }>>>;
}

/** The seller's creative library: each buyer account's uploaded creatives. */
export interface SellerCreativesPort {
  /**
   * Validate creatives before anything is written: structured format ids (INVALID_FORMAT_ID), defined
   * by the creative agent their `agent_url` names, asset URLs http(s), no id twice. Throws on the first
   * problem (ProtocolError naming its field under `field`).
   */
  prepare(creatives: readonly CreativeUpload[], field: string): Promise<PreparedCreative[]>;
  /** Upsert prepared creatives into the account's library; each one's action. */
  write(
    tx: Queryable,
    owner: string,
    accountId: string,
    prepared: readonly PreparedCreative[],
    now: Date,
  ): Promise<Map<string, 'created' | 'updated' | 'unchanged'>>;
  /** Format keys of the account's library creatives among `creativeIds` (absent: not in the library). */
  formatKeys(q: Queryable, accountId: string, creativeIds: readonly string[]): Promise<Map<string, string>>;
  /** Media buys attach their packages once, in init; until then assignments are refused. */
  attach(packages: CreativePackages): void;
}

export const SellerCreatives = token<SellerCreativesPort>('sales.seller-creatives');
