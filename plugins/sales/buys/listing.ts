import { sql } from '../../../core/sql.ts';
import type { DatabasePort } from '../../../core/ports/database.ts';
import type { Json } from '../../../core/task.ts';
import { BatchedRead, byWish, wishRows } from '../../../lib/batched-read.ts';
import { renderImpairment } from '../impairments.ts';
import { renderFeedback } from '../feedback.ts';
import type { DeliveredBuyRow, ListedBuyRow, ListedPackage } from './store.ts';
import type { DeliveredPackage } from '../reports.ts';

/** Which buys a reader wants: the caller's, listed to buyers (not under the seller's review), narrowed by the filters its shape names. */
export interface BuysWanted {
  owner: string;
  /** Filters the shape names; null otherwise. */
  account_id: string | null;
  ids: readonly string[] | null;
  statuses: readonly string[] | null;
  limit: number;
  offset: number;
}

/** The filters a read may apply, on the wish `r`. `confirmed`: 3.0 readers see confirmed buys only. */
const FILTERS = {
  confirmed: sql`m.confirmed_at IS NOT NULL`,
  account: sql`m.account_id = r.account_id`,
  ids: sql`m.media_buy_id = ANY(r.ids)`,
  statuses: sql`m.status = ANY(r.statuses)`,
};
export type BuysFilter = keyof typeof FILTERS;

/** A listed buy with its packages (each with its count of assigned creatives), open impairments and the feedback received (get_media_buys only). */
export interface ListedBuy<B = ListedBuyRow, P = ListedPackage> {
  buy: B;
  packages: P[];
  impairments: Json[];
  feedback: Json[];
}

/** A page of buys in creation order and how many match in all (`delivered`: not counted, the page's size). */
export interface BuysPage<B = ListedBuyRow, P = ListedPackage> {
  buys: ListedBuy<B, P>[];
  total: number;
}

/**
 * What a reader shows of the buys and beside them: `listed` (get_media_buys) the members it renders
 * of buys and packages, impairments and feedback; `delivered` (get_media_buy_delivery) the members
 * its reporting period and figures use, packages uncounted. Only what is shown is read: less for
 * Postgres to run and send, for the driver to decode (each timestamp a Date, each json a parse).
 */
export type BuysView = 'listed' | 'delivered';

/** The columns of a ListedBuyRow, a DeliveredBuyRow (created_at: the order of the page). */
const COLUMNS: Record<BuysView, ReturnType<typeof sql>> = {
  listed: sql`m.media_buy_id, m.account_id, m.status, m.revision, m.currency, m.total_budget, m.start_time, m.end_time, m.confirmed_at,
  m.ended_at, m.rejection_reason, m.canceled_by, m.cancellation_reason, m.governance, m.created_at, m.updated_at,
  (m.push_config IS NOT NULL OR m.reporting_webhook IS NOT NULL) AS pushes`,
  delivered: sql`m.media_buy_id, m.status, m.currency, m.start_time, m.end_time, m.started_at, m.ended_at, m.created_at`,
};
/** The columns of a ListedPackage, a DeliveredPackage (position: their order). */
const PACKAGE_COLUMNS: Record<BuysView, ReturnType<typeof sql>> = {
  listed: sql`p.package_id, p.product_id, p.budget, p.currency, p.bid_price, p.paused, p.canceled, p.format_ids, p.targeting_overlay, p.position,
    (SELECT count(*)::int FROM sales_creative_assignments a WHERE a.package_id = p.package_id) AS creatives`,
  delivered: sql`p.package_id, p.pricing_model, p.rate, p.currency, p.paused, p.position`,
};
// Numerics come as strings in json (both drivers).
const toListed = (r: any): ListedPackage => ({
  package_id: r.package_id,
  product_id: r.product_id,
  budget: Number(r.budget),
  currency: r.currency,
  bid_price: r.bid_price === null ? null : Number(r.bid_price),
  paused: r.paused,
  canceled: r.canceled,
  format_ids: r.format_ids,
  targeting_overlay: r.targeting_overlay,
  creatives: Number(r.creatives ?? 0),
});
// The buy's members built by name: a rest or spread copy of the row costs more than the rest of its mapping.
const toListedBuy = (r: any): ListedBuyRow => ({
  media_buy_id: r.media_buy_id,
  account_id: r.account_id,
  status: r.status,
  revision: Number(r.revision),
  currency: r.currency,
  total_budget: Number(r.total_budget),
  start_time: r.start_time,
  end_time: r.end_time,
  confirmed_at: r.confirmed_at,
  ended_at: r.ended_at,
  rejection_reason: r.rejection_reason,
  canceled_by: r.canceled_by,
  cancellation_reason: r.cancellation_reason,
  governance: r.governance,
  created_at: r.created_at,
  updated_at: r.updated_at,
  pushes: r.pushes,
});
const toDeliveredBuy = (r: any): DeliveredBuyRow => ({
  media_buy_id: r.media_buy_id,
  status: r.status,
  currency: r.currency,
  start_time: r.start_time,
  end_time: r.end_time,
  started_at: r.started_at,
  ended_at: r.ended_at,
  created_at: r.created_at,
});
const toDelivered = (r: any): DeliveredPackage => ({
  package_id: r.package_id,
  pricing_model: r.pricing_model,
  rate: Number(r.rate),
  currency: r.currency,
  paused: r.paused,
});

/**
 * The buys every reader waiting at once wants (get_media_buys, get_media_buy_delivery), with what
 * it shows beside them, in one statement per round, view and filter set (BatchedRead).
 */
export class BuyListings {
  private readonly pages: BatchedRead<BuysWanted, BuysPage<ListedBuyRow | DeliveredBuyRow, ListedPackage | DeliveredPackage>>;

  constructor(db: DatabasePort) {
    this.pages = new BatchedRead(async (shape, wishes) => {
      const [view, filters] = shape.split(':') as [BuysView, string];
      const where = [sql`m.owner = r.owner`, sql`m.status <> 'pending_review'`, ...(filters ? filters.split(',').map((f) => FILTERS[f as BuysFilter]) : [])];
      const rows = await db.query<{
        i: number;
        listed_total: number;
        package_rows: any[];
        impairment_rows?: any[];
        feedback_rows?: any[];
        [column: string]: any;
      }>(sql`
        SELECT m.*,
          (SELECT COALESCE(json_agg(p ORDER BY p.position), '[]') FROM (
            SELECT ${PACKAGE_COLUMNS[view]} FROM sales_packages p WHERE p.media_buy_id = m.media_buy_id) p) AS package_rows
          ${
            view === 'listed'
              ? sql`, (SELECT COALESCE(json_agg(x ORDER BY x.observed_at, x.impairment_id), '[]')
                  FROM sales_impairments x WHERE x.media_buy_id = m.media_buy_id AND x.state = 'open') AS impairment_rows,
                (SELECT COALESCE(json_agg(f ORDER BY f.submitted_at, f.feedback_id), '[]')
                  FROM sales_performance_feedback f WHERE f.media_buy_id = m.media_buy_id) AS feedback_rows`
              : sql.empty
          }
        FROM ${wishRows(wishes, 'owner text, account_id text, ids text[], statuses text[], "limit" int, "offset" int')}
        CROSS JOIN LATERAL (
          SELECT r.i, ${COLUMNS[view]}${view === 'listed' ? sql`, count(*) OVER ()::int AS listed_total` : sql.empty} FROM sales_media_buys m WHERE ${sql.join(where, ' AND ')}
          ORDER BY m.created_at, m.media_buy_id LIMIT r."limit" OFFSET r."offset") m
        ORDER BY m.i, m.created_at, m.media_buy_id`);
      const toPackage: (r: any) => ListedPackage | DeliveredPackage = view === 'listed' ? toListed : toDelivered;
      // Timestamps come as Dates (both drivers); numbers as the driver gives them.
      const toBuy: (r: any) => ListedBuyRow | DeliveredBuyRow = view === 'listed' ? toListedBuy : toDeliveredBuy;
      return byWish(rows, wishes.length).map((page) => ({
        total: page[0]?.listed_total ?? page.length,
        buys: page.map((row) => ({
          buy: toBuy(row),
          packages: row.package_rows.map(toPackage),
          impairments: row.impairment_rows?.map(renderImpairment) ?? [],
          feedback: row.feedback_rows?.map(renderFeedback) ?? [],
        })),
      }));
    });
  }

  /** A page of the buys `wanted` names through `filters`; a page past the end still counts the matches. */
  read(view: 'listed', filters: readonly BuysFilter[], wanted: BuysWanted): Promise<BuysPage<ListedBuyRow, ListedPackage>>;
  read(view: 'delivered', filters: readonly BuysFilter[], wanted: BuysWanted): Promise<BuysPage<DeliveredBuyRow, DeliveredPackage>>;
  async read(
    view: BuysView,
    filters: readonly BuysFilter[],
    wanted: BuysWanted,
  ): Promise<BuysPage<ListedBuyRow | DeliveredBuyRow, ListedPackage | DeliveredPackage>> {
    const shape = `${view}:${filters.join(',')}`;
    const page = await this.pages.read(shape, wanted);
    if (page.buys.length || wanted.offset === 0) return page;
    return { buys: [], total: (await this.pages.read(shape, { ...wanted, limit: 1, offset: 0 })).total };
  }
}
