import type { Json } from '../../../core/task.ts';
import { VALID_ACTIONS } from './status.ts';
import type { BuyRow, ListedBuyRow, ListedPackage, PackageRow } from './store.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A package as create/update responses and webhooks show it (core/package.json). */
export function renderPackage(p: PackageRow): Json {
  const out: Json = {
    package_id: p.package_id,
    product_id: p.product_id,
    budget: p.budget,
    pricing_option_id: p.pricing_option_id,
    paused: p.paused,
    canceled: p.canceled,
  };
  if (p.bid_price !== null) out.bid_price = p.bid_price;
  if (p.format_ids.length) out.format_ids = p.format_ids;
  if (p.targeting_overlay) out.targeting_overlay = p.targeting_overlay;
  // What the buyer still has to send creatives for.
  if (p.creatives === 0 && p.format_ids.length && !p.canceled) out.format_ids_to_provide = p.format_ids;
  return out;
}

/**
 * The media buy as create_media_buy / update_media_buy answer it and persistent webhooks carry it.
 * The lifecycle status is `media_buy_status` (3.1): in 3.1 the top-level `status` is the task's,
 * which 3.0 reads as the buy's; `completed` satisfies both enums, so the pipeline's `status` stays.
 */
export function renderBuy(b: BuyRow, packages: PackageRow[]): Json {
  const out: Json = {
    media_buy_id: b.media_buy_id,
    media_buy_status: b.status,
    confirmed_at: iso(b.confirmed_at),
    revision: b.revision,
    currency: b.currency,
    total_budget: b.total_budget,
    valid_actions: [...VALID_ACTIONS[b.status]],
    packages: packages.map(renderPackage),
    sandbox: b.sandbox,
  };
  if (b.governance) out.governance = renderGovernance(b);
  return out;
}

/** The governance decision the buy was created under (an extension member; both versions allow it). */
export function renderGovernance(b: Pick<BuyRow, 'governance'>): Json | undefined {
  const g = b.governance;
  if (!g) return undefined;
  const out: Json = { plan_id: g.plan_id, check_id: g.check_id, status: g.status, explanation: g.explanation };
  if (g.conditions.length) out.conditions = g.conditions;
  if (g.expires_at) out.expires_at = g.expires_at;
  return out;
}

/** A media buy as get_media_buys lists it. */
export function renderListedBuy(b: ListedBuyRow, packages: ListedPackage[], account: { account_id: string; name: string; status: string } | undefined): Json {
  // The buy's flight, which every package shows too.
  const start_time = b.start_time.toISOString();
  const end_time = b.end_time.toISOString();
  const out: Json = {
    media_buy_id: b.media_buy_id,
    status: b.status,
    currency: b.currency,
    total_budget: b.total_budget,
    start_time,
    end_time,
    confirmed_at: iso(b.confirmed_at),
    revision: b.revision,
    created_at: b.created_at.toISOString(),
    updated_at: b.updated_at.toISOString(),
    valid_actions: [...VALID_ACTIONS[b.status]],
    packages: packages.map((p) => {
      const pkg: Json = {
        package_id: p.package_id,
        product_id: p.product_id,
        budget: p.budget,
        currency: p.currency,
        start_time,
        end_time,
        paused: p.paused,
        canceled: p.canceled,
      };
      if (p.bid_price !== null) pkg.bid_price = p.bid_price;
      if (p.format_ids.length) pkg.format_ids = p.format_ids;
      if (p.targeting_overlay) pkg.targeting_overlay = p.targeting_overlay;
      if (p.creatives === 0 && p.format_ids.length && !p.canceled) pkg.format_ids_pending = p.format_ids;
      return pkg;
    }),
  };
  if (account) out.account = account;
  if (b.governance) out.governance = renderGovernance(b);
  if (b.rejection_reason) out.rejection_reason = b.rejection_reason;
  if (b.status === 'canceled' && b.ended_at) {
    out.cancellation = {
      canceled_at: b.ended_at.toISOString(),
      canceled_by: b.canceled_by === 'seller' ? 'seller' : 'buyer',
      ...(b.cancellation_reason ? { reason: b.cancellation_reason.slice(0, 500) } : {}),
    };
  }
  return out;
}
