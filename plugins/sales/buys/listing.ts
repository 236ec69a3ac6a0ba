import { sql } from '../../../core/sql.ts';
import type { DatabasePort } from '../../../core/ports/database.ts';
import type { Json } from '../../../core/task.ts';
import { BatchedRead, byWish, wishRows } from '../../../lib/batched-read.ts';
import { renderImpairment } from '../impairments.ts';
import { renderFeedback } from '../feedback.ts';
import { toBuy, toPackage, type BuyRow, type PackageRow } from './store.ts';

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

/** A listed buy with its packages (each with its count of assigned creatives), open impairments and the feedback received. */
export interface ListedBuy {
  buy: BuyRow;
  packages: PackageRow[];
  impairments: Json[];
  feedback: Json[];
}

/** A page of buys in creation order and how many match in all. */
export interface BuysPage {
  buys: ListedBuy[];
  total: number;
}

/**
 * The buys every reader waiting at once wants (get_media_buys, get_media_buy_delivery), with
 * everything shown beside them, in one statement per round and filter set (BatchedRead).
 */
export class BuyListings {
  private readonly pages: BatchedRead<BuysWanted, BuysPage>;

  constructor(db: DatabasePort) {
    this.pages = new BatchedRead(async (shape, wishes) => {
      const where = [sql`m.owner = r.owner`, sql`m.status <> 'pending_review'`, ...(shape ? shape.split(',').map((f) => FILTERS[f as BuysFilter]) : [])];
      const rows = await db.query<
        Record<string, unknown> & { i: number; listed_total: number; package_rows: any[]; impairment_rows: any[]; feedback_rows: any[] }
      >(sql`
        SELECT m.*,
          (SELECT COALESCE(jsonb_agg(to_jsonb(p) || jsonb_build_object('creatives',
              (SELECT count(*)::int FROM sales_creative_assignments a WHERE a.package_id = p.package_id)) ORDER BY p.position), '[]'::jsonb)
            FROM sales_packages p WHERE p.media_buy_id = m.media_buy_id) AS package_rows,
          (SELECT COALESCE(jsonb_agg(to_jsonb(x) ORDER BY x.observed_at, x.impairment_id), '[]'::jsonb)
            FROM sales_impairments x WHERE x.media_buy_id = m.media_buy_id AND x.state = 'open') AS impairment_rows,
          (SELECT COALESCE(jsonb_agg(to_jsonb(f) ORDER BY f.submitted_at, f.feedback_id), '[]'::jsonb)
            FROM sales_performance_feedback f WHERE f.media_buy_id = m.media_buy_id) AS feedback_rows
        FROM ${wishRows(wishes, 'owner text, account_id text, ids text[], statuses text[], "limit" int, "offset" int')}
        CROSS JOIN LATERAL (
          SELECT r.i, *, count(*) OVER ()::int AS listed_total FROM sales_media_buys m WHERE ${sql.join(where, ' AND ')}
          ORDER BY m.created_at, m.media_buy_id LIMIT r."limit" OFFSET r."offset") m
        ORDER BY m.i, m.created_at, m.media_buy_id`);
      return byWish(rows, wishes.length).map((page) => ({
        total: page[0]?.listed_total ?? 0,
        buys: page.map(({ i: _, listed_total: __, package_rows, impairment_rows, feedback_rows, ...buy }) => ({
          buy: toBuy(buy),
          packages: package_rows.map(toPackage),
          impairments: impairment_rows.map(renderImpairment),
          feedback: feedback_rows.map(renderFeedback),
        })),
      }));
    });
  }

  /** A page of the buys `wanted` names through `filters`; a page past the end still counts the matches. */
  async read(filters: readonly BuysFilter[], wanted: BuysWanted): Promise<BuysPage> {
    const shape = filters.join(',');
    const page = await this.pages.read(shape, wanted);
    if (page.buys.length || wanted.offset === 0) return page;
    return { buys: [], total: (await this.pages.read(shape, { ...wanted, limit: 1, offset: 0 })).total };
  }
}
