import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { SalesAccounts } from '../../core/ports/sales-accounts.ts';
import { TestController } from '../../core/ports/test-controller.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { Tasks } from '../../core/task.ts';
import { createSalesAccounts, type AccountsDeps } from './store.ts';
import { AccountCache } from './account-cache.ts';
import { listAccountsTask, syncAccountsTask } from './tasks.ts';
import { syncGovernanceTask } from './governance.ts';
import { accountScenarios } from './scenarios.ts';

const options = v.object({
  /** Every account is a sandbox one (no real money): the public test agent. */
  sandbox: v.optional(v.boolean(), false),
  /**
   * Sandbox only: the test accounts every caller starts with. A caller that lists its accounts
   * before declaring any finds these (AdCP: a sandbox buyer discovers a pre-existing test account).
   */
  sandboxAccounts: v.optional(
    v.array(v.object({ brand: v.object({ domain: v.pipe(v.string(), v.minLength(1)) }), operator: v.pipe(v.string(), v.minLength(1)) })),
    [],
  ),
});

export type SalesAccountsOptions = v.InferInput<typeof options>;

/**
 * The seller's buyer accounts (sync_accounts, list_accounts), declared by the buyer: the other sales
 * plugins resolve the account a request names through the SalesAccounts port.
 */
export default definePlugin({
  name: 'sales-accounts',
  deps: { db: Database, tasks: Tasks, clock: Clock, ids: Ids, box: optional(SecretBox), controller: optional(TestController) },
  provides: [SalesAccounts],
  options,
  env: { SALES_SANDBOX: { path: 'sandbox', type: 'bool' } },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init({ db, tasks, clock, ids, box, controller }, kernel) {
    const o = kernel.options;
    const cache = new AccountCache();
    const deps: AccountsDeps = { db, clock, ids, box, cache, options: { sandbox: o.sandbox, sandboxAccounts: o.sandbox ? o.sandboxAccounts : [] } };
    kernel.provide(SalesAccounts, createSalesAccounts(deps));
    tasks.add(syncAccountsTask(deps), listAccountsTask(deps), syncGovernanceTask(deps));
    // Buyer-declared accounts: sync_accounts (or, on a sandbox deployment, first use) creates them.
    tasks.declareCapability({
      protocol: 'media_buy',
      block: { account: { require_operator_auth: false, supported_billing: ['operator', 'agent', 'advertiser'], required_for_products: false, sandbox: true } },
    });
    controller?.register(...accountScenarios(deps));
    let unfollow: (() => Promise<void>) | undefined;
    return {
      async start() {
        unfollow = await cache.follow(db, kernel.logger);
      },
      stop: () => unfollow?.(),
    };
  },
});
