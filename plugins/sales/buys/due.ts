import { TERMINAL, type BuyRow } from './store.ts';
import { windowEnd } from '../windows.ts';

/** Statuses in which a buy runs toward its end time. */
export const LIVE: ReadonlySet<BuyRow['status']> = new Set(['pending_creatives', 'pending_start', 'active', 'paused']);

/**
 * When the lifecycle job must look at a buy next: its start, its end, its next report (estimated
 * from the reporting cursor unless `reportAt` says better) and its coalesced impairment fire.
 */
export function dueAt(b: BuyRow, delayMs: number, reportAt?: Date | null): Date | null {
  const times: number[] = [];
  if (b.status === 'pending_start') times.push(b.start_time.getTime());
  if (LIVE.has(b.status)) times.push(b.end_time.getTime());
  if (b.reporting_webhook && !b.final_sent_at) {
    if (reportAt !== undefined) {
      if (reportAt) times.push(reportAt.getTime());
    } else if (TERMINAL.has(b.status) && b.ended_at) times.push(b.ended_at.getTime() + delayMs);
    else if (b.report_cursor) times.push(windowEnd(b.report_cursor, b.reporting_webhook.reporting_frequency).getTime() + delayMs);
  }
  if (b.impairments_due_at) times.push(b.impairments_due_at.getTime());
  return times.length ? new Date(Math.min(...times)) : null;
}
