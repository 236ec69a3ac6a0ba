import * as v from 'valibot';
import { join } from 'node:path';
import { definePlugin, optional } from '../../core/plugin.ts';
import { loadMigrations } from '../../core/migrations.ts';
import { Database } from '../../core/ports/database.ts';
import { Clock } from '../../core/ports/clock.ts';
import { Ids } from '../../core/ports/ids.ts';
import { SecretBox } from '../../core/ports/secrets.ts';
import { Crawler } from '../../core/ports/crawler.ts';
import { Inventory } from '../../core/ports/inventory.ts';
import { AdServer } from '../../core/ports/ad-server.ts';
import { WebhookOutbox } from '../../core/ports/webhook-outbox.ts';
import { WebhookActivity } from '../../core/ports/webhook-activity.ts';
import { TaskNotifier } from '../../core/ports/task-notifier.ts';
import { Governance } from '../../core/ports/governance.ts';
import { SalesAccounts } from '../../core/ports/sales-accounts.ts';
import { SellerCreatives } from '../../core/ports/seller-creatives.ts';
import { ListReader } from '../../core/ports/list-reader.ts';
import { readFileSync } from 'node:fs';
import { pinSandboxLists, sandboxLists } from './list-targeting.ts';
import { MediaBuys } from '../../core/ports/media-buys.ts';
import { TestController } from '../../core/ports/test-controller.ts';
import { AdServerSimulation } from '../../core/ports/ad-server-simulation.ts';
import { ConfigError } from '../../core/config-error.ts';
import { providePerformanceFeedbackTask } from './feedback.ts';
import { createRemoteGovernance } from './governance-client.ts';
import { salesScenarios } from './test-controls.ts';
import { salesSeeds } from './test-seeds.ts';
import { forcedArmScenarios } from './forced-arms.ts';
import { Tasks } from '../../core/task.ts';
import type { SalesDeps } from './deps.ts';
import { getProductsTask, reportingCapabilities } from './products.ts';
import { createMediaBuyTask } from './buys/create.ts';
import { updateMediaBuyTask } from './buys/update.ts';
import { getMediaBuysTask } from './buys/list.ts';
import { BuyListings } from './buys/listing.ts';
import { getMediaBuyDeliveryTask } from './delivery.ts';
import { getAccountFinancialsTask } from './financials.ts';
import { issueInvoices } from './billing/invoices.ts';
import { billingScenarios } from './billing/scenarios.ts';
import { AD_SERVER_TOOLS } from './upstream.ts';
import { createEventHandler } from './impairments.ts';
import { runDueBuy } from './lifecycle.ts';
import { mediaBuysPort } from './buys/serving.ts';
import { creativePackages } from './buys/assignments.ts';

/** The sales specialisms these tasks serve (each has its own official storyboard). */
const SALES_SPECIALISMS = [
  'sales-non-guaranteed',
  'sales-guaranteed',
  'sales-proposal-mode',
  'sales-broadcast-tv',
  'sales-catalog-driven',
  'sales-social',
  'audience-sync',
  'governance-aware-seller',
] as const;

const options = v.object({
  /** Every buy and answer is a sandbox (no real money): the public test agent. */
  sandbox: v.optional(v.boolean(), false),
  minPackageBudget: v.optional(v.pipe(v.number(), v.minValue(0)), 100),
  maxPackages: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50)), 50),
  /** General impairments are batched per buy for this long (the spec's ceiling is 5 minutes). */
  impairmentCoalesceSeconds: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(300, 'must be at most 300 (5 minutes)')), 300),
  /** How often the lifecycle job looks for due transitions, reports and impairment fires. */
  jobIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10)), 1000),
  /** How often the invoicing job looks for closed months to invoice (an invoice follows its month's close by at most this). */
  invoiceIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10)), 3_600_000),
  /** The credit limit of a net_* account without its own (core/account.json credit_limit), in the currency it is billed in. */
  defaultCreditLimit: v.optional(v.pipe(v.number(), v.minValue(0)), 50_000),
  /** This agent's URL as governance agents see it (default: server.publicUrl, else http://localhost:PORT). */
  agentUrl: v.optional(v.pipe(v.string(), v.url('must be an absolute URL'))),
  /**
   * The governance agent consulted before create_media_buy when the buy names a plan_id: the one
   * of this deployment (the Governance port), or a remote one at `agentUrl` (MCP) authenticated
   * with `token`, the credential the plan owner issued to this seller. `required`: refuse buys
   * without a plan_id.
   */
  governance: v.optional(
    v.object({
      agentUrl: v.optional(v.pipe(v.string(), v.url('must be an absolute URL'))),
      token: v.optional(v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters'))),
      required: v.optional(v.boolean(), false),
    }),
    {},
  ),
  /** AdCP specialisms declared in capabilities: the kinds of selling this deployment's inventory supports. */
  specialisms: v.optional(v.array(v.picklist(SALES_SPECIALISMS)), [...SALES_SPECIALISMS]),
  /**
   * A sandbox's property and collection lists, pinned (a JSON file of `[{agent_url, list_id, kind, items}]`):
   * targeting that names them resolves without their governance agent (the test kits' lists).
   */
  sandboxLists: v.optional(v.string()),
});

export type SalesPluginOptions = v.InferInput<typeof options>;

/**
 * The sales agent's media buys (media-buy protocol): products from the Inventory port, media buys
 * under the buyer's accounts (SalesAccounts port) with their lifecycle on the AdServer port,
 * creatives validated with the creative agent that defines their formats, delivery reporting,
 * performance feedback and persistent webhooks (start, delivery reports, impairments) through the
 * webhook outbox, scheduled by one job that claims due buys with FOR UPDATE SKIP LOCKED. A
 * governance agent (Governance port, or remote over MCP) is consulted before buys that name a
 * plan; sandbox test scenarios go to the TestController port when the deployment has one. Accounts
 * and buyer data (audiences, conversions, catalogs) are the sales-accounts and sales-buyer-data plugins.
 */
export default definePlugin({
  name: 'sales',
  provides: [MediaBuys],
  deps: {
    db: Database,
    tasks: Tasks,
    clock: Clock,
    ids: Ids,
    box: SecretBox,
    inventory: Inventory,
    adServer: AdServer,
    outbox: WebhookOutbox,
    accounts: SalesAccounts,
    activity: optional(WebhookActivity),
    notifier: optional(TaskNotifier),
    creatives: SellerCreatives,
    crawler: optional(Crawler),
    governance: optional(Governance),
    lists: optional(ListReader),
    controller: optional(TestController),
    simulation: optional(AdServerSimulation),
  },
  options,
  env: {
    SALES_SANDBOX: { path: 'sandbox', type: 'bool' },
    GOVERNANCE_AGENT_URL: 'governance.agentUrl',
    GOVERNANCE_AGENT_TOKEN: 'governance.token',
    GOVERNANCE_REQUIRED: { path: 'governance.required', type: 'bool' },
  },
  migrations: loadMigrations(join(import.meta.dir, 'migrations')),
  init(
    { db, tasks, clock, ids, box, inventory, adServer, outbox, accounts, activity, notifier, creatives, crawler, governance, lists, controller, simulation },
    kernel,
  ) {
    const o = kernel.options;
    const { publicUrl, port } = kernel.config.server;
    let governanceAgent = governance;
    if (o.governance.agentUrl) {
      if (!crawler) throw new ConfigError('plugins.sales.governance.agentUrl: needs a crawler in the deployment (crawler-http) for outbound requests');
      if (!o.governance.token) throw new ConfigError('plugins.sales.governance.token: is required with governance.agentUrl (set GOVERNANCE_AGENT_TOKEN)');
      // A configured remote agent wins over a governance plugin in the same deployment.
      governanceAgent = createRemoteGovernance(crawler, o.governance.agentUrl, o.governance.token);
    }
    const deps: SalesDeps = {
      db,
      clock,
      ids,
      box,
      inventory,
      adServer,
      outbox,
      activity,
      notifier,
      creatives,
      crawler,
      governance: governanceAgent,
      accounts,
      lists,
      ...(controller?.active ? { upstreamDown: (principalId: string, tool: string) => controller.upstreamDown(db, principalId, tool) } : {}),
      options: {
        sandbox: o.sandbox,
        minPackageBudget: o.minPackageBudget,
        maxPackages: o.maxPackages,
        impairmentCoalesceSeconds: o.impairmentCoalesceSeconds,
        agentUrl: (o.agentUrl ?? publicUrl ?? `http://localhost:${port}`).replace(/\/+$/, ''),
        governanceRequired: o.governance.required,
        defaultCreditLimit: o.defaultCreditLimit,
      },
      logger: kernel.logger,
    };
    // The two reads of buys share their batched statement.
    const listings = new BuyListings(deps.db);
    tasks.add(
      getProductsTask(deps),
      createMediaBuyTask(deps),
      updateMediaBuyTask(deps),
      getMediaBuysTask(deps, listings),
      getMediaBuyDeliveryTask(deps, listings),
      getAccountFinancialsTask(deps),
      providePerformanceFeedbackTask(deps),
    );
    tasks.declareCapability({
      protocol: 'media_buy',
      specialisms: o.specialisms,
      block: {
        media_buy: {
          supported_pricing_models: ['cpm', 'vcpm', 'cpc', 'cpcv', 'cpv', 'flat_rate'],
          buying_modes: ['brief', 'refine'],
          reporting_delivery_methods: ['webhook'],
          propagation_surfaces: ['snapshot', 'webhook'],
          // Each rich block below also sets its feature flag: buyers gate on `features.<name>` (open map in both versions).
          features: {
            inline_creative_management: true,
            property_list_filtering: true,
          },
          reporting_capabilities: reportingCapabilities(deps),
        },
      },
    });
    kernel.provide(MediaBuys, mediaBuysPort);
    creatives.attach(creativePackages);
    adServer.subscribe(createEventHandler(deps));
    controller?.register(...salesScenarios(deps, simulation), ...salesSeeds(deps), ...forcedArmScenarios(deps), ...billingScenarios(deps));
    controller?.declareUpstreams(...AD_SERVER_TOOLS);
    kernel.scheduler.add({ name: 'lifecycle', intervalMs: o.jobIntervalMs, run: async () => ((await runDueBuy(deps)) ? 'again' : undefined) });
    kernel.scheduler.add({ name: 'invoices', intervalMs: o.invoiceIntervalMs, run: async () => ((await issueInvoices(deps)) ? 'again' : undefined) });
    let pinned: v.InferOutput<typeof sandboxLists> = [];
    if (o.sandboxLists) {
      const parsed = v.safeParse(sandboxLists, JSON.parse(readFileSync(o.sandboxLists, 'utf8')));
      if (!parsed.success) throw new ConfigError(`plugins.sales.sandboxLists: ${o.sandboxLists}: ${v.summarize(parsed.issues).split('\n')[0]}`);
      pinned = parsed.output;
    }
    return {
      async start() {
        if (pinned.length) await pinSandboxLists(deps, pinned);
      },
    };
  },
});
