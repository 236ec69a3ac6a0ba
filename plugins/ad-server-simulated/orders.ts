import { pipelined } from '../../lib/pipelined.ts';
import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { Booking, LineState, Order, OrderLine } from '../../core/ports/ad-server.ts';
import type { PricingModel } from '../../core/ports/inventory.ts';
import type { ModelLine } from './model.ts';

export interface ApprovalOptions {
  /** Orders of at least this total budget wait for a review (`pending_review`); absent: never. */
  reviewAboveBudget?: number;
  /** How long a review takes. */
  reviewMinutes: number;
  /** Orders of at least this total budget are rejected at review; absent: never. */
  rejectAboveBudget?: number;
}

interface OrderRow {
  media_buy_id: string;
  start_time: Date;
  end_time: Date;
  decision: Booking['decision'];
  review_at: Date | null;
  reason: string | null;
}

const total = (lines: readonly OrderLine[]) => lines.reduce((s, l) => s + l.budget, 0);

export async function upsertLines(tx: Queryable, mediaBuyId: string, lines: readonly OrderLine[]): Promise<void> {
  // Issued together: one round trip for every line.
  await pipelined(
    lines.map((l) =>
      tx.query(sql`
      INSERT INTO adsim_lines (media_buy_id, package_id, product_id, budget, pricing_model, rate, currency, ctr, inventory_share)
      VALUES (${mediaBuyId}::text, ${l.packageId}::text, ${l.productId}::text, ${l.budget}::numeric, ${l.pricingModel}::text,
              ${l.rate}::numeric, ${l.currency}::text, ${l.ctr}::numeric, COALESCE(${l.inventoryShare ?? null}::numeric, 1))
      ON CONFLICT (media_buy_id, package_id) DO UPDATE SET budget = EXCLUDED.budget, rate = EXCLUDED.rate,
        inventory_share = COALESCE(${l.inventoryShare ?? null}::numeric, adsim_lines.inventory_share)`),
    ),
  );
}

export const requiresReview = (order: Order, approval: ApprovalOptions) =>
  approval.reviewAboveBudget !== undefined && total(order.lines) >= approval.reviewAboveBudget;

export function book(tx: Queryable, order: Order, now: Date, approval: ApprovalOptions): Promise<Booking> {
  const review = requiresReview(order, approval);
  const reviewAt = new Date(now.getTime() + approval.reviewMinutes * 60_000);
  // The order and its lines in one round trip (issued in order: the lines follow their order). The decision
  // needs no answer from them: not waited for, they are the caller's transaction's, whose COMMIT follows them.
  pipelined([
    tx.query(sql`
    INSERT INTO adsim_orders (media_buy_id, owner, start_time, end_time, decision, review_at, booked_at, events_through)
    VALUES (${order.mediaBuyId}::text, ${order.owner}::text, ${order.startTime}::timestamptz, ${order.endTime}::timestamptz,
            ${review ? 'pending_review' : 'approved'}::text, ${review ? reviewAt : null}::timestamptz, ${now}::timestamptz, ${order.startTime}::timestamptz)`),
    upsertLines(tx, order.mediaBuyId, order.lines),
  ]).catch(() => {});
  return Promise.resolve(review ? { decision: 'pending_review', reviewAt } : { decision: 'approved' });
}

/** A pending booking is decided once its review time has come; decisions never change after. */
export async function review(tx: Queryable, mediaBuyId: string, now: Date, approval: ApprovalOptions): Promise<Booking> {
  const [order] = await tx.query<OrderRow>(
    sql`SELECT media_buy_id, start_time, end_time, decision, review_at, reason FROM adsim_orders WHERE media_buy_id = ${mediaBuyId}::text FOR UPDATE`,
  );
  if (!order) return { decision: 'rejected', reason: 'unknown order' };
  if (order.decision === 'approved') return { decision: 'approved' };
  if (order.decision === 'rejected') return { decision: 'rejected', reason: order.reason ?? 'rejected', code: 'IO_REQUIRED' };
  if (new Date(order.review_at!).getTime() > now.getTime()) return { decision: 'pending_review', reviewAt: new Date(order.review_at!) };
  const [row] = await tx.query<{ budget: string }>(
    sql`SELECT COALESCE(sum(budget), 0)::text AS budget FROM adsim_lines WHERE media_buy_id = ${mediaBuyId}::text`,
  );
  const reject = approval.rejectAboveBudget !== undefined && Number(row!.budget) >= approval.rejectAboveBudget;
  const reason = reject ? `Total budget exceeds the ${approval.rejectAboveBudget} this seller accepts without an insertion order` : null;
  await tx.query(
    sql`UPDATE adsim_orders SET decision = ${reject ? 'rejected' : 'approved'}::text, reason = ${reason}::text WHERE media_buy_id = ${mediaBuyId}::text`,
  );
  return reject ? { decision: 'rejected', reason: reason!, code: 'IO_REQUIRED' } : { decision: 'approved' };
}

export async function setState(tx: Queryable, mediaBuyId: string, state: LineState, at: Date, packageIds?: readonly string[]): Promise<void> {
  await tx.query(sql`
    INSERT INTO adsim_line_states (media_buy_id, package_id, state, at)
    SELECT media_buy_id, package_id, ${state}::text, ${at}::timestamptz FROM adsim_lines
    WHERE media_buy_id = ${mediaBuyId}::text ${packageIds ? sql`AND package_id = ANY(${[...packageIds]}::text[])` : sql.empty}`);
}

export async function amend(tx: Queryable, mediaBuyId: string, change: { startTime?: Date; endTime?: Date; lines?: OrderLine[] }): Promise<void> {
  if (change.startTime || change.endTime) {
    await tx.query(sql`UPDATE adsim_orders SET start_time = COALESCE(${change.startTime ?? null}::timestamptz, start_time),
      end_time = COALESCE(${change.endTime ?? null}::timestamptz, end_time) WHERE media_buy_id = ${mediaBuyId}::text`);
  }
  if (change.lines?.length) await upsertLines(tx, mediaBuyId, change.lines);
}

/** A line as the model sees it, one JSON object (`l`: adsim_lines, `o`: its adsim_orders row): budget less injected spend, state timeline. */
export const LINE = sql`json_build_object('media_buy_id', l.media_buy_id, 'package_id', l.package_id,
  'budget', GREATEST(0, l.budget - (SELECT COALESCE(sum(i.spend), 0) FROM adsim_injected i WHERE i.media_buy_id = l.media_buy_id AND i.package_id = l.package_id))::text,
  'pricing_model', l.pricing_model, 'rate', l.rate::text, 'ctr', l.ctr::text, 'inventory_share', l.inventory_share::text,
  'start_time', o.start_time, 'end_time', o.end_time,
  'states', (SELECT json_agg(json_build_object('state', s.state, 'at', s.at) ORDER BY s.at, s.id) FROM adsim_line_states s
    WHERE s.media_buy_id = l.media_buy_id AND s.package_id = l.package_id))`;

/** A LINE object as the model takes it. */
export function toModelLine(r: {
  media_buy_id: string;
  package_id: string;
  budget: string;
  pricing_model: PricingModel;
  rate: string;
  ctr: string;
  inventory_share: string;
  start_time: string;
  end_time: string;
  states: Array<{ state: LineState; at: string }> | null;
}): ModelLine {
  return {
    mediaBuyId: r.media_buy_id,
    packageId: r.package_id,
    budget: Number(r.budget),
    pricingModel: r.pricing_model,
    rate: Number(r.rate),
    ctr: Number(r.ctr),
    inventoryShare: Number(r.inventory_share),
    flightStart: new Date(r.start_time),
    flightEnd: new Date(r.end_time),
    states: (r.states ?? []).map((s) => ({ state: s.state, at: new Date(s.at) })),
  };
}

/** The model's view of the approved orders' lines. */
export async function modelLines(db: Queryable, mediaBuyIds: readonly string[]): Promise<ModelLine[]> {
  const rows = await db.query<{ line: Parameters<typeof toModelLine>[0] }>(sql`
    SELECT ${LINE} AS line FROM adsim_lines l JOIN adsim_orders o USING (media_buy_id)
    WHERE l.media_buy_id = ANY(${[...mediaBuyIds]}::text[]) AND o.decision = 'approved'
    ORDER BY l.media_buy_id, l.package_id`);
  return rows.map((r) => toModelLine(r.line));
}
