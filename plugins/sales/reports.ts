import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { DeliveryFigures, WindowReport } from '../../core/ports/ad-server.ts';
import type { Json } from '../../core/task.ts';
import type { SalesDeps } from './deps.ts';
import { fire } from './channels.ts';
import { loadPackages, TERMINAL, type BuyRow, type PackageRow } from './buys/store.ts';
import { windowEnd } from './windows.ts';
import { cents } from './money.ts';

export type ReportType = 'scheduled' | 'final' | 'delayed' | 'adjusted';

/** The members of a package its figures show. */
export type DeliveredPackage = Pick<PackageRow, 'package_id' | 'pricing_model' | 'rate' | 'currency' | 'paused'>;

/** Per-package and total figures of one window report, in package order. */
export function figures(packages: readonly DeliveredPackage[], rep: WindowReport, withClicks = true) {
  const lines = new Map(rep.lines.map((l) => [l.packageId, l]));
  const byPackage = packages.map((p) => {
    const l: DeliveryFigures = lines.get(p.package_id) ?? { impressions: 0, spend: 0, clicks: 0 };
    const row: Json = { package_id: p.package_id, impressions: l.impressions, spend: cents(l.spend) };
    if (withClicks) row.clicks = l.clicks;
    // Conversions the buyer logged (log_event), attributed by the ad server.
    if (l.conversions) {
      row.conversions = l.conversions;
      row.conversion_value = cents(l.conversionValue ?? 0);
    }
    row.pricing_model = p.pricing_model;
    row.rate = p.rate;
    row.currency = p.currency;
    row.paused = p.paused;
    return row;
  });
  const totals: Json = {
    impressions: byPackage.reduce((s, r) => s + (r.impressions as number), 0),
    spend: cents(byPackage.reduce((s, r) => s + (r.spend as number), 0)),
  };
  if (withClicks) totals.clicks = byPackage.reduce((s, r) => s + (r.clicks as number), 0);
  if (byPackage.some((r) => r.conversions !== undefined)) {
    totals.conversions = byPackage.reduce((s, r) => s + ((r.conversions as number) ?? 0), 0);
    totals.conversion_value = cents(byPackage.reduce((s, r) => s + ((r.conversion_value as number) ?? 0), 0));
  }
  return { totals, byPackage };
}

/**
 * The `result` of a reporting_webhook fire (media-buy-delivery-webhook-result in 3.1; the
 * get_media_buy_delivery response with notification_type in 3.0): the window's figures, a
 * per-buy `sequence_number`, the `reporting_period`; never `aggregated_totals` nor `notification_id`.
 */
export function reportResult(
  b: BuyRow,
  packages: readonly PackageRow[],
  rep: WindowReport,
  type: ReportType,
  sequence: number,
  period: { start: Date; end: Date },
): Json {
  const metrics = b.reporting_webhook?.requested_metrics;
  const { totals, byPackage } = figures(packages, rep, !metrics || metrics.includes('clicks') || metrics.includes('ctr'));
  const delivery: Json = { media_buy_id: b.media_buy_id, status: type === 'delayed' ? 'reporting_delayed' : b.status, totals, by_package: byPackage };
  if (type === 'adjusted') delivery.is_adjusted = true;
  if (type === 'delayed' && rep.availableAt) delivery.expected_availability = rep.availableAt.toISOString();
  const out: Json = {
    notification_type: type,
    sequence_number: sequence,
    reporting_period: { start: period.start.toISOString(), end: period.end.toISOString() },
    currency: b.currency,
    media_buy_deliveries: [delivery],
  };
  if (type === 'delayed') out.partial_data = true;
  return out;
}

async function send(
  tx: Queryable,
  deps: SalesDeps,
  b: BuyRow,
  packages: readonly PackageRow[],
  rep: WindowReport,
  type: ReportType,
  seq: number,
  period: { start: Date; end: Date },
): Promise<void> {
  const messages: Record<ReportType, string> = {
    scheduled: 'Scheduled delivery report',
    final: `Final delivery report: the media buy is ${b.status}`,
    delayed: 'Delivery data for this window is late; partial figures',
    adjusted: 'Restated delivery for a window reported earlier',
  };
  await fire(tx, deps, b, 'reporting', {
    message: messages[type],
    result: reportResult(b, packages, rep, type, seq, period),
    notificationType: type,
    sequenceNumber: seq,
  });
  await tx.query(sql`INSERT INTO sales_report_log (media_buy_id, sequence_number, notification_type, period_start, period_end, created_at)
    VALUES (${b.media_buy_id}::text, ${seq}::int, ${type}::text, ${period.start}::timestamptz, ${period.end}::timestamptz, ${deps.clock.now()}::timestamptz)`);
}

export interface ReportProgress {
  report_cursor: Date | null;
  report_seq: number;
  delayed_window: Date | null;
  final_sent_at: Date | null;
  /** When reporting needs the buy again (null: never). */
  nextAt: Date | null;
}

/**
 * Send every reporting_webhook fire that is due, in window order: `scheduled` for each closed
 * window once its data is complete (windows start at activation, at the registered cadence),
 * `delayed` once for a window whose data is late, and after end of life `final` with lifetime
 * figures; nothing after `final`. Runs in the lifecycle job's transaction.
 */
export async function sendDueReports(tx: Queryable, deps: SalesDeps, b: BuyRow, now: Date): Promise<ReportProgress> {
  const progress: ReportProgress = {
    report_cursor: b.report_cursor,
    report_seq: b.report_seq,
    delayed_window: b.delayed_window,
    final_sent_at: b.final_sent_at,
    nextAt: null,
  };
  const cfg = b.reporting_webhook;
  if (!cfg || b.final_sent_at) return progress;
  const delay = deps.adServer.reporting.expectedDelayMinutes * 60_000;
  const packages = (await loadPackages(tx, [b.media_buy_id])).get(b.media_buy_id)!;
  const stop = b.ended_at?.getTime() ?? Number.POSITIVE_INFINITY;
  let windowsDone = !progress.report_cursor;
  for (let i = 0; progress.report_cursor && i < 50; i++) {
    const start = progress.report_cursor;
    const end = windowEnd(start, cfg.reporting_frequency);
    if (end.getTime() > stop) {
      windowsDone = true;
      break;
    }
    if (now.getTime() < end.getTime() + delay) {
      progress.nextAt = new Date(end.getTime() + delay);
      break;
    }
    const [rep] = await deps.adServer.report(tx, b.media_buy_id, [{ start, end }], now);
    if (!rep!.ready) {
      if (progress.delayed_window?.getTime() !== start.getTime()) {
        await send(tx, deps, b, packages, rep!, 'delayed', ++progress.report_seq, { start, end });
        progress.delayed_window = start;
      }
      progress.nextAt = rep!.availableAt ?? new Date(now.getTime() + 60_000);
      break;
    }
    await send(tx, deps, b, packages, rep!, 'scheduled', ++progress.report_seq, { start, end });
    progress.report_cursor = end;
    progress.delayed_window = null;
    // Many windows due at once (a long outage): continue on the next run, at once.
    progress.nextAt = now;
  }
  if (progress.nextAt && progress.nextAt.getTime() > now.getTime()) return progress;
  if (!TERMINAL.has(b.status) || !b.ended_at) return progress;
  if (!windowsDone && progress.nextAt) return progress;
  const finalAt = b.ended_at.getTime() + delay;
  if (now.getTime() < finalAt) return { ...progress, nextAt: new Date(finalAt) };
  const period = { start: b.started_at ?? b.start_time, end: b.ended_at };
  if (period.start > period.end) period.start = period.end;
  const [rep] = await deps.adServer.report(tx, b.media_buy_id, [period], now);
  if (!rep!.ready) return { ...progress, nextAt: rep!.availableAt ?? new Date(now.getTime() + 60_000) };
  await send(tx, deps, b, packages, rep!, 'final', ++progress.report_seq, period);
  return { ...progress, final_sent_at: now, nextAt: null };
}

/** An `adjusted` fire for every window reported before a restatement that touched it. */
export async function sendAdjustments(
  tx: Queryable,
  deps: SalesDeps,
  b: BuyRow,
  range: { start: Date; end: Date; restatedAt: Date },
  now: Date,
): Promise<number> {
  if (!b.reporting_webhook || b.final_sent_at) return 0;
  const windows = await tx.query<{ period_start: Date; period_end: Date }>(sql`
    SELECT DISTINCT period_start, period_end FROM sales_report_log
    WHERE media_buy_id = ${b.media_buy_id}::text AND notification_type = 'scheduled' AND created_at < ${range.restatedAt}::timestamptz
      AND period_start < ${range.end}::timestamptz AND period_end > ${range.start}::timestamptz
    ORDER BY period_start`);
  if (!windows.length) return 0;
  const packages = (await loadPackages(tx, [b.media_buy_id])).get(b.media_buy_id)!;
  const periods = windows.map((w) => ({ start: new Date(w.period_start), end: new Date(w.period_end) }));
  const reps = await deps.adServer.report(tx, b.media_buy_id, periods, now);
  let seq = b.report_seq;
  for (const [i, rep] of reps.entries()) await send(tx, deps, b, packages, rep, 'adjusted', ++seq, periods[i]!);
  return seq - b.report_seq;
}

/**
 * A `delayed` fire for the buy's current reporting window, now (the test controller's late-data
 * scenario): partial figures as known now, and the window is marked so the regular job does not
 * send another `delayed` for it. Returns the fire's sequence number and period.
 */
export async function sendDelayedNow(tx: Queryable, deps: SalesDeps, b: BuyRow, now: Date): Promise<{ sequence: number; period: { start: Date; end: Date } }> {
  const start = b.report_cursor!;
  const period = { start, end: windowEnd(start, b.reporting_webhook!.reporting_frequency) };
  const packages = (await loadPackages(tx, [b.media_buy_id])).get(b.media_buy_id)!;
  const [rep] = await deps.adServer.report(tx, b.media_buy_id, [period], now);
  const late: WindowReport = {
    ...rep!,
    ready: false,
    availableAt: rep!.availableAt ?? new Date(period.end.getTime() + deps.adServer.reporting.expectedDelayMinutes * 60_000),
  };
  const sequence = b.report_seq + 1;
  await send(tx, deps, b, packages, late, 'delayed', sequence, period);
  return { sequence, period };
}
