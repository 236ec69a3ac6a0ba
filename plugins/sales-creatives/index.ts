import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { Inventory } from '../../core/ports/inventory.ts';
import { CreativeFormats } from '../../core/ports/creative-formats.ts';
import { SalesAccounts } from '../../core/ports/sales-accounts.ts';
import { SellerCreatives, type CreativePackages } from '../../core/ports/seller-creatives.ts';
import { TestController } from '../../core/ports/test-controller.ts';
import { CreativeLibrary, CreativeStore } from '../../core/ports/creative-store.ts';
import { Tasks } from '../../core/task.ts';
import type { CreativesDeps } from './deps.ts';
import { createFormatResolver } from './formats.ts';
import { formatKeys, prepareCreatives, writeCreatives } from './library.ts';
import { syncCreativesTask } from './sync.ts';
import { listCreativesTask } from './list.ts';
import { creativeScenarios } from './scenarios.ts';
import { createCreativeStore } from './store.ts';

const options = v.object({
  /** Every answer is a sandbox one (no real money): the public test agent. */
  sandbox: v.optional(v.boolean(), false),
  /** How long a creative agent's answer about a format id is trusted. */
  formatCacheSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 3600),
});

export type SellerCreativesOptions = v.InferInput<typeof options>;

/**
 * The creative library (sync_creatives, list_creatives) of a seller, or of a creative vendor's ad server
 * (config/creative-agent.ts, without media buys or products): creatives of each buyer account,
 * their format ids checked with the creative agent that defines them (this deployment's, or a remote
 * one asked through the crawler, answers cached). Media buys use the library through the
 * SellerCreatives port and attach their packages to it, so assignments go to the packages' owner.
 */
export default definePlugin({
  name: 'sales-creatives',
  deps: {
    db: Database,
    tasks: Tasks,
    clock: Clock,
    // A seller's products vouch for the formats they sell; a creative vendor hosting a library has none.
    inventory: optional(Inventory),
    accounts: SalesAccounts,
    formats: optional(CreativeFormats),
    crawler: optional(Crawler),
    controller: optional(TestController),
    library: optional(CreativeLibrary),
  },
  provides: [SellerCreatives, CreativeStore],
  options,
  env: { SALES_SANDBOX: { path: 'sandbox', type: 'bool' } },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, tasks, clock, inventory, accounts, formats, crawler, controller, library }, kernel) {
    const o = kernel.options;
    let packages: CreativePackages | undefined;
    const deps: CreativesDeps = {
      db,
      clock,
      accounts,
      formats: createFormatResolver({ db, clock, local: formats, inventory, crawler, logger: kernel.logger, sandbox: o.sandbox }, o.formatCacheSeconds),
      packages: () => packages,
      options: { sandbox: o.sandbox },
    };
    kernel.provide(SellerCreatives, {
      prepare: (creatives, field) => prepareCreatives(deps, creatives, field),
      write: writeCreatives,
      formatKeys,
      attach(p) {
        packages = p;
      },
    });
    const store = createCreativeStore(deps);
    kernel.provide(CreativeStore, store);
    // The creative agent of this deployment serves tags from this library.
    library?.attach(store);
    tasks.add(syncCreativesTask(deps), listCreativesTask(deps));
    controller?.register(...creativeScenarios(deps));
  },
});
