import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { AdServerPort } from '../../core/ports/ad-server.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { SalesAccountsPort } from '../../core/ports/sales-accounts.ts';
import type { MediaBuysPort } from '../../core/ports/media-buys.ts';

export interface BuyerDataOptions {
  /** Every answer is a sandbox one (no real money): the public test agent. */
  sandbox: boolean;
  /** This deployment's base URL: conversion pixels point at it. */
  baseUrl: string;
  /** Matched members an audience needs before it can be targeted. */
  minAudienceSize: number;
  /** Share of hashed identifiers the simulated identity graph matches. */
  audienceMatchRate: number;
  /** Inline catalog items above which sync_catalogs runs asynchronously (feeds always do). */
  catalogSyncItems: number;
  maxCatalogItems: number;
  maxFeedBytes: number;
  /** http:// feed URLs (loopback tests with the crawler's allowlist); never in production. */
  allowHttpFeeds: boolean;
}

/** Everything the buyer-data tasks share (built once in init). */
export interface BuyerDataDeps {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  /** Conversions are attributed by the ad server, to the lines of the buys serving at the event times. */
  adServer: AdServerPort;
  /** Catalog feeds; absent: feed URLs are refused. */
  crawler: CrawlerPort | undefined;
  accounts: SalesAccountsPort;
  mediaBuys: MediaBuysPort;
  options: BuyerDataOptions;
}
