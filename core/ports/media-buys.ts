import { token } from '../token.ts';
import type { Queryable } from './database.ts';

/** What features beside the media buys (conversion tracking) need to know of an account's buys. */
export interface MediaBuysPort {
  /**
   * Ids of the account's buys that served at some moment of [from, to]: started at or before `to`,
   * and not ended (or due to end) by `from`. Runs on the caller's `q` (its transaction).
   */
  servingBetween(q: Queryable, accountId: string, from: Date, to: Date): Promise<string[]>;
}

export const MediaBuys = token<MediaBuysPort>('sales.media-buys');
