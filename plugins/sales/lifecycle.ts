import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { SalesDeps } from './deps.ts';
import { fire } from './channels.ts';
import { addHistory, loadBuy, loadPackages, updateBuy, type BuyRow } from './buys/store.ts';
import { renderBuy } from './buys/render.ts';
import { requireTransition } from './buys/status.ts';
import { sendDueReports } from './reports.ts';
import { flushImpairments } from './impairments.ts';
import { dueAt, LIVE } from './buys/due.ts';

/** `pending_start` -> `active` at the start time: lines go live and the buyer gets a signed webhook. */
async function activate(tx: Queryable, deps: SalesDeps, b: BuyRow, now: Date): Promise<BuyRow> {
  const packages = (await loadPackages(tx, [b.media_buy_id])).get(b.media_buy_id)!;
  const live = packages.filter((p) => !p.paused && !p.canceled).map((p) => p.package_id);
  if (live.length) await deps.adServer.setState(tx, b.media_buy_id, 'live', now, live);
  const next: BuyRow = { ...b, status: requireTransition(b.status, 'active'), revision: b.revision + 1, started_at: now, report_cursor: now, updated_at: now };
  await addHistory(tx, { mediaBuyId: b.media_buy_id, revision: next.revision, at: now, actor: 'seller', action: 'activated', summary: 'Campaign started' });
  await fire(tx, deps, next, 'push', {
    message: `Campaign started: media buy ${b.media_buy_id} is active`,
    result: { status: 'completed', ...renderBuy(next, packages) },
  });
  return next;
}

/** Any live status -> `completed` at the end time (delivery stops at the flight end). */
async function complete(tx: Queryable, deps: SalesDeps, b: BuyRow, now: Date): Promise<BuyRow> {
  await deps.adServer.setState(tx, b.media_buy_id, 'ended', b.end_time);
  const next: BuyRow = { ...b, status: requireTransition(b.status, 'completed'), revision: b.revision + 1, ended_at: b.end_time, updated_at: now };
  await addHistory(tx, { mediaBuyId: b.media_buy_id, revision: next.revision, at: now, actor: 'seller', action: 'completed', summary: 'Flight ended' });
  return next;
}

/** Everything due for one buy, in its row lock: transitions, impairment fires, reports; then its next due time. */
export async function advance(tx: Queryable, deps: SalesDeps, buy: BuyRow, now: Date): Promise<void> {
  let b = buy;
  if (b.status === 'pending_start' && b.start_time <= now) b = await activate(tx, deps, b, now);
  if (LIVE.has(b.status) && b.end_time <= now) b = await complete(tx, deps, b, now);
  if (b.impairments_due_at && b.impairments_due_at <= now) {
    await flushImpairments(tx, deps, b);
    b = { ...b, impairments_due_at: null };
  }
  const reports = await sendDueReports(tx, deps, b, now);
  const { nextAt, ...progress } = reports;
  b = { ...b, ...progress };
  const delayMs = deps.adServer.reporting.expectedDelayMinutes * 60_000;
  await updateBuy(tx, b.media_buy_id, {
    status: b.status,
    revision: b.revision,
    started_at: b.started_at,
    ended_at: b.ended_at,
    report_cursor: b.report_cursor,
    report_seq: b.report_seq,
    delayed_window: b.delayed_window,
    final_sent_at: b.final_sent_at,
    impairments_due_at: b.impairments_due_at,
    updated_at: b.updated_at,
    due_at: dueAt(b, delayMs, nextAt),
  });
}

/**
 * One step of the lifecycle job: claim the most overdue buy (FOR UPDATE SKIP LOCKED, so
 * instances share the work and never process a buy twice at once) and advance it. Its webhooks
 * are queued in the same transaction. Returns false when nothing is due.
 */
export async function runDueBuy(deps: SalesDeps): Promise<boolean> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const [row] = await tx.query<{ media_buy_id: string }>(sql`SELECT media_buy_id FROM sales_media_buys
      WHERE due_at <= ${now}::timestamptz ORDER BY due_at, media_buy_id LIMIT 1 FOR UPDATE SKIP LOCKED`);
    if (!row) return false;
    const buy = await loadBuy(tx, row.media_buy_id, null);
    await advance(tx, deps, buy!, now);
    return true;
  });
}
