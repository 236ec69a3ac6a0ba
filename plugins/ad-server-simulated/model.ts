import type { DeliveryFigures, LineState } from '../../core/ports/ad-server.ts';
import type { PricingModel } from '../../core/ports/inventory.ts';

const HOUR = 3_600_000;

/** Tunables of the delivery model; the same seed and options give the same numbers, always. */
export interface ModelOptions {
  seed: string;
  /** Minutes after a window closes before its data is complete. */
  delayMinutes: number;
  /** Share of windows whose data arrives late, and by how much. */
  lateProbability: number;
  lateMinutes: number;
  /** Share of delivered hours later restated (invalid traffic removed), by how much, and when. */
  adjustmentProbability: number;
  adjustmentFactor: number;
  adjustmentLagMinutes: number;
  /** Delivery speed relative to even pacing over the flight (1.05 = 5% ahead). */
  pacing: number;
}

export interface ModelLine {
  mediaBuyId: string;
  packageId: string;
  budget: number;
  pricingModel: PricingModel;
  rate: number;
  ctr: number;
  /** Share of the product's inventory the targeting leaves (0..1). */
  inventoryShare: number;
  flightStart: Date;
  flightEnd: Date;
  /** The line's state changes, in order. */
  states: Array<{ state: LineState; at: Date }>;
}

/** A number in [0, 1) from the seed and the parts: the model's only randomness. */
export function unit(...parts: Array<string | number>): number {
  const h = Bun.hash(parts.join('\u0000'));
  return Number(BigInt(h) & 0xfffffffffffffn) / 2 ** 52;
}

/** The daily curve by hour of the day (UTC): a peak at 14:00 of 1.4x, a trough at 02:00 of 0.6x. */
const DAILY = Array.from({ length: 24 }, (_, h) => 1 + 0.4 * Math.sin((2 * Math.PI * (h - 14)) / 24));

/**
 * A line's hourly draws (noise, restatement, CTR: `unit` of each hour), from its flight's first
 * hour on. Every report of a line integrates its flight from the start, so without them a report
 * hashed three values per hour served: ~15 µs per line for a new buy, ~575 µs at 30 days. Kept per
 * process (they follow from the seed alone), for at most MAX_DRAWN_HOURS line-hours over all lines.
 */
interface Draws {
  key: string;
  seed: string;
  buy: string;
  pkg: string;
  first: number;
  /** Hours drawn so far from `first`; values[3 * i + k] is draw k of hour first + i. */
  hours: number;
  values: Float64Array;
}
const MAX_DRAWN_HOURS = 100_000;
const drawn = new Map<string, Draws>();
let drawnHours = 0;

function drawsOf(line: ModelLine, o: ModelOptions): Draws {
  const key = `${o.seed}\u0000${line.mediaBuyId}\u0000${line.packageId}`;
  const first = Math.floor(line.flightStart.getTime() / HOUR);
  let d = drawn.get(key);
  // A flight moved earlier starts afresh: its earlier hours were never drawn.
  if (d === undefined || first < d.first) {
    if (d) drawnHours -= d.hours;
    d = { key, seed: o.seed, buy: line.mediaBuyId, pkg: line.packageId, first, hours: 0, values: new Float64Array(3 * 24) };
    drawn.set(key, d);
  }
  return d;
}

/** Forget every line's draws (tests: the figures must not depend on what was drawn before). */
export function forgetDraws(): void {
  drawn.clear();
  drawnHours = 0;
}

/** Where hour `hour`'s draws are in `d.values` (an hour of the flight: intervals are clamped to it), drawing the hours up to it first. */
function drawsAt(d: Draws, hour: number): number {
  const i = hour - d.first;
  if (i < d.hours) return 3 * i;
  if (drawnHours + i + 1 - d.hours > MAX_DRAWN_HOURS) {
    // Bounded: the others start afresh (a miss only costs drawing again).
    drawn.clear();
    drawn.set(d.key, d);
    drawnHours = d.hours;
  }
  if (3 * (i + 1) > d.values.length) {
    const grown = new Float64Array(Math.max(3 * (i + 1), 2 * d.values.length));
    grown.set(d.values.subarray(0, 3 * d.hours));
    d.values = grown;
  }
  for (let h = d.hours; h <= i; h++) {
    const at = d.first + h;
    d.values[3 * h] = unit(d.seed, 'noise', d.buy, d.pkg, at);
    d.values[3 * h + 1] = unit(d.seed, 'adjust', d.buy, d.pkg, at);
    d.values[3 * h + 2] = unit(d.seed, 'ctr', d.buy, d.pkg, at);
  }
  drawnHours += i + 1 - d.hours;
  d.hours = i + 1;
  return 3 * i;
}

/** Intervals [from, to) during which the line served, clamped to its flight. */
export function activeIntervals(line: ModelLine): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const start = line.flightStart.getTime();
  const end = line.flightEnd.getTime();
  let liveSince: number | null = null;
  for (const s of line.states) {
    const at = s.at.getTime();
    if (s.state === 'live') liveSince ??= at;
    else if (liveSince !== null) {
      out.push([liveSince, at]);
      liveSince = null;
    }
    if (s.state === 'ended') break;
  }
  if (liveSince !== null) out.push([liveSince, Number.POSITIVE_INFINITY]);
  return out.map(([a, b]) => [Math.max(a, start), Math.min(b, end)] as [number, number]).filter(([a, b]) => b > a);
}

/** Impressions the line should deliver over its flight at even pacing. */
function targetImpressions(line: ModelLine): number {
  const r = line.rate;
  switch (line.pricingModel) {
    case 'cpc':
      return line.ctr > 0 ? line.budget / r / line.ctr : (line.budget / r) * 1000;
    case 'cpcv':
    case 'cpv':
      return line.budget / r / 0.7;
    case 'flat_rate':
      // A flat fee buys the flight's share of avails; modelled at a notional $20 CPM.
      return (line.budget / 20) * 1000;
    default:
      return (line.budget / r) * 1000;
  }
}

function spendOf(line: ModelLine, impressions: number, clicks: number, activeHours: number, flightHours: number): number {
  switch (line.pricingModel) {
    case 'cpc':
      return clicks * line.rate;
    case 'vcpm':
      return ((impressions * 0.7) / 1000) * line.rate;
    case 'cpcv':
    case 'cpv':
      return impressions * 0.7 * line.rate;
    case 'flat_rate':
      return (line.budget * activeHours) / flightHours;
    default:
      return (impressions / 1000) * line.rate;
  }
}

/**
 * Cumulative continuous delivery of a line at each of `times` (ascending), as known at `asOf`:
 * an hourly rate (even pacing x a daily curve x per-hour noise) integrated over the line's active
 * time, hours flagged for restatement scaled once `asOf` passes their restatement time, and
 * everything stopped when spend reaches the budget. Integers and cents come from differences of
 * floors of these values, so any partition of a window adds up to the window.
 */
export function cumulative(line: ModelLine, times: number[], asOf: number, o: ModelOptions): Array<{ impressions: number; clicks: number; spend: number }> {
  const intervals = activeIntervals(line);
  const flightHours = Math.max(1, (line.flightEnd.getTime() - line.flightStart.getTime()) / HOUR);
  const base = (targetImpressions(line) / flightHours) * o.pacing * line.inventoryShare;
  const out: Array<{ impressions: number; clicks: number; spend: number }> = [];
  let imps = 0;
  let clicks = 0;
  let active = 0;
  let spend = 0;
  let capped = false;
  let cursor = intervals[0]?.[0] ?? Number.POSITIVE_INFINITY;
  const draws = drawsOf(line, o);
  const advance = (to: number) => {
    for (const [a, b] of intervals) {
      let from = Math.max(a, cursor);
      const until = Math.min(b, to);
      while (!capped && from < until) {
        const hour = Math.floor(from / HOUR);
        const next = Math.min(until, (hour + 1) * HOUR);
        const hours = (next - from) / HOUR;
        const daily = DAILY[hour % 24]!;
        const at = drawsAt(draws, hour);
        const noise = 0.8 + 0.4 * draws.values[at]!;
        const restated = draws.values[at + 1]! < o.adjustmentProbability && asOf >= (hour + 1) * HOUR + o.adjustmentLagMinutes * 60_000;
        const factor = restated ? o.adjustmentFactor : 1;
        const ctr = line.ctr * (0.7 + 0.6 * draws.values[at + 2]!);
        const di = base * daily * noise * factor * hours;
        const dc = di * ctr;
        const nextSpend = spendOf(line, imps + di, clicks + dc, active + hours, flightHours);
        if (nextSpend > line.budget) {
          // Stop inside this hour, where spend meets the budget.
          const share = Math.max(0, Math.min(1, (line.budget - spend) / Math.max(1e-9, nextSpend - spend)));
          imps += di * share;
          clicks += dc * share;
          active += hours * share;
          spend = line.budget;
          capped = true;
        } else {
          imps += di;
          clicks += dc;
          active += hours;
          spend = nextSpend;
        }
        from = next;
      }
    }
    cursor = Math.max(cursor, to);
  };
  for (const t of times) {
    advance(Math.min(t, asOf));
    out.push({ impressions: imps, clicks, spend });
  }
  return out;
}

/** Figures of [start, end) from two cumulative points. */
export function between(a: { impressions: number; clicks: number; spend: number }, b: { impressions: number; clicks: number; spend: number }): DeliveryFigures {
  return {
    impressions: Math.floor(b.impressions) - Math.floor(a.impressions),
    clicks: Math.floor(b.clicks) - Math.floor(a.clicks),
    spend: (Math.floor(b.spend * 100) - Math.floor(a.spend * 100)) / 100,
  };
}

/** When the data of a window ending at `end` is complete (late for a seeded share of windows). */
export function availableAt(mediaBuyId: string, end: number, o: ModelOptions): number {
  const late = unit(o.seed, 'late', mediaBuyId, Math.floor(end / HOUR)) < o.lateProbability;
  return end + (o.delayMinutes + (late ? o.lateMinutes : 0)) * 60_000;
}

/** Hours of [from, to) the model restates for a line (its delivery_adjusted events). */
export function restatedHours(line: ModelLine, from: number, to: number, o: ModelOptions): number[] {
  if (o.adjustmentProbability <= 0) return [];
  const out: number[] = [];
  const intervals = activeIntervals(line);
  const draws = drawsOf(line, o);
  for (let hour = Math.floor(from / HOUR); hour * HOUR < to; hour++) {
    const served = intervals.some(([a, b]) => a < (hour + 1) * HOUR && b > hour * HOUR);
    if (served && draws.values[drawsAt(draws, hour) + 1]! < o.adjustmentProbability) out.push(hour);
  }
  return out;
}
