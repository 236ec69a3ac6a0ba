import { describe, expect, test } from 'bun:test';
import { between, cumulative, availableAt, forgetDraws, restatedHours, type ModelLine, type ModelOptions } from '../../plugins/ad-server-simulated/model.ts';

const HOUR = 3_600_000;
const START = Date.UTC(2026, 2, 2);
const options: ModelOptions = {
  seed: 'model-test',
  delayMinutes: 60,
  lateProbability: 0,
  lateMinutes: 0,
  adjustmentProbability: 0,
  adjustmentFactor: 0.9,
  adjustmentLagMinutes: 60,
  pacing: 1,
};
const line = (over: Partial<ModelLine> = {}): ModelLine => ({
  mediaBuyId: 'mb_1',
  packageId: 'pkg_1',
  budget: 10_000,
  pricingModel: 'cpm',
  rate: 10,
  ctr: 0.002,
  inventoryShare: 1,
  flightStart: new Date(START),
  flightEnd: new Date(START + 10 * 24 * HOUR),
  states: [{ state: 'live', at: new Date(START) }],
  ...over,
});
const figures = (l: ModelLine, from: number, to: number, asOf: number, o = options) => {
  const [a, b] = cumulative(l, [from, to], asOf, o);
  return between(a!, b!);
};

describe('simulated ad server delivery model', () => {
  test('delivery scales with the inventory share the targeting leaves; none leaves none', () => {
    const at = START + 48 * HOUR;
    const [full] = cumulative(line(), [at], at, options);
    const [half] = cumulative(line({ inventoryShare: 0.5 }), [at], at, options);
    const [none] = cumulative(line({ inventoryShare: 0 }), [at], at, options);
    expect(full!.impressions).toBeGreaterThan(0);
    expect(half!.impressions).toBeCloseTo(full!.impressions / 2, 6);
    expect(none).toEqual({ impressions: 0, clicks: 0, spend: 0 });
  });

  test('deterministic for a seed, different for another', () => {
    const asOf = START + 48 * HOUR;
    expect(figures(line(), START, asOf, asOf)).toEqual(figures(line(), START, asOf, asOf));
    expect(figures(line(), START, asOf, asOf)).not.toEqual(figures(line(), START, asOf, asOf, { ...options, seed: 'other' }));
  });

  test('windows add up to their union, to the impression, click and cent', () => {
    const asOf = START + 30 * HOUR;
    const total = figures(line(), START, asOf, asOf);
    const parts = Array.from({ length: 30 }, (_, h) => figures(line(), START + h * HOUR, START + (h + 1) * HOUR, asOf));
    expect(parts.reduce((s, p) => s + p.impressions, 0)).toBe(total.impressions);
    expect(parts.reduce((s, p) => s + p.clicks, 0)).toBe(total.clicks);
    expect(Math.round(parts.reduce((s, p) => s + p.spend, 0) * 100)).toBe(Math.round(total.spend * 100));
    // Even pacing: about a tenth of the budget per day.
    expect(total.spend).toBeGreaterThan(10_000 / 10 / 2);
  });

  test('nothing after asOf, nothing while paused, never beyond the budget', () => {
    const asOf = START + 5 * HOUR;
    expect(figures(line(), asOf, asOf + 5 * HOUR, asOf).impressions).toBe(0);
    const paused = line({
      states: [
        { state: 'live', at: new Date(START) },
        { state: 'paused', at: new Date(START + 2 * HOUR) },
        { state: 'live', at: new Date(START + 4 * HOUR) },
      ],
    });
    expect(figures(paused, START + 2 * HOUR, START + 4 * HOUR, START + 10 * HOUR).impressions).toBe(0);
    expect(figures(paused, START + 4 * HOUR, START + 5 * HOUR, START + 10 * HOUR).impressions).toBeGreaterThan(0);
    const small = line({ budget: 100, flightEnd: new Date(START + 2 * HOUR) });
    const all = figures(small, START, START + 48 * HOUR, START + 48 * HOUR, { ...options, pacing: 3 });
    expect(all.spend).toBe(100);
  });

  test('restated hours shrink once the restatement time has passed; late windows are complete later', () => {
    const o = { ...options, adjustmentProbability: 1, adjustmentFactor: 0.5, adjustmentLagMinutes: 120 };
    const before = figures(line(), START, START + HOUR, START + 2 * HOUR, o);
    const after = figures(line(), START, START + HOUR, START + 3 * HOUR, o);
    expect(Math.abs(after.impressions - before.impressions / 2)).toBeLessThanOrEqual(1);
    expect(availableAt('mb_1', START + HOUR, { ...options, lateProbability: 1, lateMinutes: 90 })).toBe(START + HOUR + 150 * 60_000);
    expect(availableAt('mb_1', START + HOUR, options)).toBe(START + HOUR + 60 * 60_000);
  });

  test('the same figures as the model has always given (a 30-day flight, restatements on)', () => {
    forgetDraws();
    const o = { ...options, adjustmentProbability: 0.2 };
    const long = line({ flightEnd: new Date(START + 40 * 24 * HOUR) });
    const t = START + 30 * 24 * HOUR + 1234567;
    // Computed before the hourly draws were kept per line: an upgrade must not restate delivery already reported.
    expect(cumulative(long, [START + 7 * 24 * HOUR, t], t, o)).toEqual([
      { impressions: 171357.82775969015, clicks: 346.80338649220056, spend: 1713.5782775969014 },
      { impressions: 734062.8610939143, clicks: 1479.1989036259583, spend: 7340.628610939143 },
    ]);
    expect(restatedHours(long, START, START + 24 * HOUR, o)).toEqual([492341, 492343, 492347]);
  });

  test('figures do not depend on which hours were drawn before: partly drawn, a flight moved earlier, the bound reached', () => {
    const o = { ...options, adjustmentProbability: 0.3 };
    const fresh = (l: ModelLine, times: number[], asOf: number) => {
      forgetDraws();
      return cumulative(l, times, asOf, o);
    };
    const long = line({ flightEnd: new Date(START + 60 * 24 * HOUR) });
    const end = START + 45 * 24 * HOUR;
    const whole = fresh(long, [START + 24 * HOUR, end], end);
    cumulative(long, [START + 3 * HOUR], START + 3 * HOUR, o); // its first hours only
    expect(cumulative(long, [START + 24 * HOUR, end], end, o)).toEqual(whole);

    const later = line({ flightStart: new Date(START + 5 * 24 * HOUR), states: [{ state: 'live', at: new Date(START + 5 * 24 * HOUR) }] });
    const laterWhole = fresh(later, [end], end);
    forgetDraws();
    cumulative(long, [end], end, o); // the same line drawn from an earlier start
    expect(cumulative(later, [end], end, o)).toEqual(laterWhole);
    forgetDraws();
    cumulative(later, [end], end, o); // drawn from the later start first
    expect(cumulative(long, [START + 24 * HOUR, end], end, o)).toEqual(whole); // then the earlier start: drawn afresh

    // 150 lines of 45 days: over the bound of line-hours kept, so lines are drawn again midway.
    const lines = Array.from({ length: 150 }, (_, i) => line({ mediaBuyId: `mb_${i}`, flightEnd: new Date(START + 60 * 24 * HOUR) }));
    const expected = lines.map((l) => fresh(l, [end], end));
    forgetDraws();
    for (let round = 0; round < 2; round++) for (const [i, l] of lines.entries()) expect(cumulative(l, [end], end, o)).toEqual(expected[i]!);
  });
});
