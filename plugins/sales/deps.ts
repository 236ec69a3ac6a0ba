import type { DatabasePort } from '../../core/ports/database.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { IdsPort } from '../../core/ports/ids.ts';
import type { SecretBoxPort } from '../../core/ports/secrets.ts';
import type { InventoryPort } from '../../core/ports/inventory.ts';
import type { AdServerPort } from '../../core/ports/ad-server.ts';
import type { WebhookOutboxPort } from '../../core/ports/webhook-outbox.ts';
import type { WebhookActivityPort } from '../../core/ports/webhook-activity.ts';
import type { TaskNotifierPort } from '../../core/ports/task-notifier.ts';
import type { CrawlerPort } from '../../core/ports/crawler.ts';
import type { GovernancePort } from '../../core/ports/governance.ts';
import type { SalesAccountsPort } from '../../core/ports/sales-accounts.ts';
import type { Logger } from '../../core/log.ts';
import type { SellerCreativesPort } from '../../core/ports/seller-creatives.ts';
import type { ListReaderPort } from '../../core/ports/list-reader.ts';

export interface SalesOptions {
  /** Every answer and buy is a sandbox (no real money): the public test agent. */
  sandbox: boolean;
  /** Smallest package budget, whatever the pricing option says. */
  minPackageBudget: number;
  maxPackages: number;
  /** General impairments are batched per buy for this long (fraud / brand safety fire at once). */
  impairmentCoalesceSeconds: number;
  /** This agent's URL: the `caller` governance agents see. */
  agentUrl: string;
  /** Refuse media buys without a plan_id when a governance agent is configured. */
  governanceRequired: boolean;
  /** Credit limit of a net_* account without its own, in the currency it is billed in. */
  defaultCreditLimit: number;
}

/** Everything the sales tasks, the lifecycle job and the event handlers share (built once in init). */
export interface SalesDeps {
  db: DatabasePort;
  clock: ClockPort;
  ids: IdsPort;
  box: SecretBoxPort;
  inventory: InventoryPort;
  adServer: AdServerPort;
  outbox: WebhookOutboxPort;
  activity: WebhookActivityPort | undefined;
  notifier: TaskNotifierPort | undefined;
  /** The creative library of the buyer accounts (sales-creatives): inline creatives, assignment checks. */
  creatives: SellerCreativesPort;
  /** Outbound requests (remote creative and governance agents); absent: none are made. */
  crawler: CrawlerPort | undefined;
  /** The governance agent consulted before create_media_buy (same deployment or remote), if any. */
  governance: GovernancePort | undefined;
  /** The buyer accounts requests name (the sales-accounts plugin). */
  accounts: SalesAccountsPort;
  /** A sandbox's forced outages (the test controller's force_upstream_unavailable); absent: none. */
  upstreamDown?: (principalId: string, tool: string) => Promise<boolean>;
  /** Lists of this deployment's governance agent, read in process; others are fetched from their agent. */
  lists: ListReaderPort | undefined;
  options: SalesOptions;
  logger: Logger;
}
