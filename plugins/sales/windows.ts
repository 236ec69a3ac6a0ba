import type { ReportingFrequency } from '../../core/ports/inventory.ts';

/** End of the reporting window that starts at `start` (calendar months for `monthly`, UTC). */
export function windowEnd(start: Date, frequency: ReportingFrequency): Date {
  if (frequency === 'hourly') return new Date(start.getTime() + 3_600_000);
  if (frequency === 'daily') return new Date(start.getTime() + 86_400_000);
  const d = new Date(start.getTime());
  d.setUTCMonth(d.getUTCMonth() + 1);
  return d;
}

/** Contiguous windows partitioning [start, end) at a granularity, the last one cut at `end`. */
export function partition(start: Date, end: Date, frequency: ReportingFrequency, max = 2000): Array<{ start: Date; end: Date }> {
  const out: Array<{ start: Date; end: Date }> = [];
  let cursor = start;
  while (cursor < end && out.length < max) {
    const next = windowEnd(cursor, frequency);
    out.push({ start: cursor, end: next < end ? next : end });
    cursor = next;
  }
  return out;
}
