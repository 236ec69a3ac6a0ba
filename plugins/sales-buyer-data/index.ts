import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { AdServer } from '../../core/ports/ad-server.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { SalesAccounts } from '../../core/ports/sales-accounts.ts';
import { MediaBuys } from '../../core/ports/media-buys.ts';
import { Tasks } from '../../core/task.ts';
import type { BuyerDataDeps } from './deps.ts';
import { Http } from '../../core/http.ts';
import { pixelRoute } from './pixel.ts';
import { syncAudiencesTask } from './audiences.ts';
import { logEventTask, syncEventSourcesTask } from './conversions.ts';
import { syncCatalogsTask } from './catalogs/sync.ts';

const options = v.object({
  /** Every answer is a sandbox one (no real money): the public test agent. */
  sandbox: v.optional(v.boolean(), false),
  minAudienceSize: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 1000),
  audienceMatchRate: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1)), 0.7),
  catalogSyncItems: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 1000),
  maxCatalogItems: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000)), 50_000),
  maxFeedBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1024), v.maxValue(100 * 1024 * 1024)), 10 * 1024 * 1024),
  allowHttpFeeds: v.optional(v.boolean(), false),
});

export type BuyerDataPluginOptions = v.InferInput<typeof options>;

/**
 * The buyer's first-party data on this seller, under one of its accounts (SalesAccounts port):
 * hashed audiences (sync_audiences), conversion event sources and events (sync_event_sources,
 * log_event; attributed by the ad server to the buys serving at the event times, MediaBuys port)
 * and product catalogs (sync_catalogs, feeds fetched through the crawler).
 */
export default definePlugin({
  name: 'sales-buyer-data',
  deps: {
    db: Database,
    tasks: Tasks,
    clock: Clock,
    ids: Ids,
    adServer: AdServer,
    accounts: SalesAccounts,
    mediaBuys: MediaBuys,
    crawler: optional(Crawler),
    http: Http,
  },
  options,
  env: { SALES_SANDBOX: { path: 'sandbox', type: 'bool' } },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, tasks, clock, ids, adServer, accounts, mediaBuys, crawler, http }, kernel) {
    const o = kernel.options;
    const { publicUrl, port } = kernel.config.server;
    const baseUrl = (publicUrl ?? `http://localhost:${port}`).replace(/\/+$/, '');
    const deps: BuyerDataDeps = { db, clock, ids, adServer, crawler, accounts, mediaBuys, options: { ...o, baseUrl } };
    // Conversion pixels of the event sources (their sync_event_sources snippet).
    http.add(pixelRoute(deps));
    tasks.add(syncAudiencesTask(deps), syncEventSourcesTask(deps), logEventTask(deps), syncCatalogsTask(deps));
    // Merged into the media_buy block of the sales plugin (which declares the specialisms, audience-sync included).
    tasks.declareCapability({
      protocol: 'media_buy',
      block: {
        media_buy: {
          features: { catalog_management: true, audience_targeting: true, conversion_tracking: true },
          audience_targeting: {
            supported_identifier_types: ['hashed_email', 'hashed_phone'],
            supported_uid_types: ['rampid', 'id5', 'uid2', 'euid', 'pairid', 'maid'],
            minimum_audience_size: o.minAudienceSize,
            matching_latency_hours: { min: 0, max: 0 },
          },
          conversion_tracking: { multi_source_event_dedup: false },
        },
      },
    });
  },
});
