import * as v from 'valibot';
import type { GovernanceCondition, GovernanceFinding } from '../../core/ports/governance.ts';
import type { Plan } from './plan-schema.ts';
import { decide, judgePolicies, type Evaluation, type GovernanceMode, type Judgement } from './evaluate.ts';

const timestamp = v.pipe(v.string('must be an ISO 8601 timestamp'), v.isoTimestamp('must be an ISO 8601 timestamp with a time zone'));
const amount = v.pipe(v.number('must be a number'), v.finite(), v.minValue(0, 'must be at least 0'));
const count = v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(0, 'must be at least 0'));
const share = v.pipe(v.number('must be a number'), v.minValue(0, 'must be at least 0'), v.maxValue(100, 'must be at most 100'));
/** Percentages keyed by country or channel. */
const shares = (key: v.GenericSchema<string, string>) =>
  v.pipe(
    v.record(key, share),
    v.check((r) => Object.keys(r).length <= 300, 'has more than 300 entries'),
  );

/** check-governance-request `delivery_metrics` (the same members in 3.0.6 and 3.1.19; both forbid others). */
export const deliveryMetrics = v.strictObject({
  reporting_period: v.pipe(
    v.strictObject({ start: timestamp, end: timestamp }, 'must be {start, end}'),
    v.forward(
      v.check((p) => Date.parse(p.end) >= Date.parse(p.start), 'must not be before reporting_period.start'),
      ['end'],
    ),
  ),
  spend: v.optional(amount),
  cumulative_spend: v.optional(amount),
  impressions: v.optional(count),
  cumulative_impressions: v.optional(count),
  geo_distribution: v.optional(shares(v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, 'keys must be ISO 3166-1 alpha-2 codes')))),
  channel_distribution: v.optional(shares(v.pipe(v.string(), v.minLength(1), v.maxLength(64, 'keys must be channels')))),
  pacing: v.optional(v.picklist(['ahead', 'on_track', 'behind'], 'must be ahead, on_track or behind')),
  audience_distribution: v.optional(v.record(v.string(), v.unknown())),
});
export type DeliveryMetrics = v.InferOutput<typeof deliveryMetrics>;

const round = (n: number) => Math.round(n * 100) / 100;
const present = (d: Record<string, number> | undefined) => Object.keys(d ?? {}).filter((k) => d![k]! > 0);

/**
 * Judge a delivery report of a governed action against its plan (phase `delivery`), the way
 * `evaluate` judges a purchase. Denied (pause recommended): the plan is not active, spend in a
 * reporting period outside the authorized flight (sync-plans: "Governed actions with dates outside
 * this window are rejected"), cumulative spend over the plan budget, delivery in a channel or
 * country the plan does not allow, or in the scope of a `must` policy. Budget drift: cumulative
 * spend ahead of an even pace over the flight by more than `reallocation_threshold` (the amount
 * above which reallocations need a person) is a warning with a human-review condition; so is a
 * channel share outside the plan's `mix_targets`.
 */
export function evaluateDelivery(plan: Plan, status: string, metrics: DeliveryMetrics, mode: GovernanceMode, now: Date): Evaluation {
  const j: Judgement = { findings: [], conditions: [], categories: new Set(), policies: [] };
  const find = (category_id: string, severity: GovernanceFinding['severity'], explanation: string) => j.findings.push({ category_id, severity, explanation });
  const condition = (c: GovernanceCondition) => j.conditions.push(c);
  const { currency, total } = plan.budget;

  j.categories.add('plan_status');
  if (status !== 'active') find('plan_status', 'critical', `Plan ${plan.plan_id} is ${status}`);

  j.categories.add('flight');
  const flightStart = Date.parse(plan.flight.start);
  const flightEnd = Date.parse(plan.flight.end);
  const periodStart = Date.parse(metrics.reporting_period.start);
  const periodEnd = Date.parse(metrics.reporting_period.end);
  if (periodStart < flightStart || periodEnd > flightEnd) {
    find(
      'flight',
      'critical',
      `Delivery reported for ${metrics.reporting_period.start} to ${metrics.reporting_period.end}, outside the plan flight ${plan.flight.start} to ${plan.flight.end}`,
    );
  }

  j.categories.add('budget_authority');
  const spent = metrics.cumulative_spend ?? metrics.spend;
  if (spent !== undefined && spent > total)
    find('budget_authority', 'critical', `Cumulative spend ${spent} ${currency} exceeds the plan budget of ${total} ${currency}`);

  const threshold = plan.budget.reallocation_threshold;
  if (spent !== undefined && threshold !== undefined) {
    j.categories.add('budget_drift');
    const elapsed = Math.min(1, Math.max(0, (periodEnd - flightStart) / (flightEnd - flightStart)));
    const pace = round(total * elapsed);
    const drift = round(spent - pace);
    if (drift > threshold) {
      find(
        'BUDGET_DRIFT_EXCEEDED',
        'warning',
        `Cumulative spend ${spent} ${currency} is ${drift} ${currency} ahead of an even pace over the flight (${pace} ${currency} by ${metrics.reporting_period.end}), more than the reallocation threshold of ${threshold} ${currency}${metrics.pacing ? `; the seller reports pacing ${metrics.pacing}` : ''}`,
      );
      condition({
        field: 'human_review',
        required_value: true,
        reason: `A person must approve spend ${drift} ${currency} ahead of pace, above the reallocation threshold`,
      });
    }
  }

  const channels = present(metrics.channel_distribution);
  const countries = present(metrics.geo_distribution);
  if (plan.channels?.allowed || plan.channels?.mix_targets) j.categories.add('channel_mix');
  const outside = channels.filter((c) => plan.channels?.allowed && !plan.channels.allowed.includes(c as never));
  if (outside.length) find('channel_mix', 'critical', `Delivered on channel(s) ${outside.join(', ')}, which the plan does not allow`);
  for (const [channel, target] of Object.entries(plan.channels?.mix_targets ?? {})) {
    const actual = metrics.channel_distribution?.[channel];
    if (actual === undefined) continue;
    const bound =
      target.max_pct !== undefined && actual > target.max_pct
        ? target.max_pct
        : target.min_pct !== undefined && actual < target.min_pct
          ? target.min_pct
          : undefined;
    if (bound === undefined) continue;
    find('channel_mix', 'warning', `${channel} has ${actual}% of delivery, outside the plan's target of ${target.min_pct ?? 0}% to ${target.max_pct ?? 100}%`);
    condition({ field: `channel_distribution.${channel}`, required_value: bound, reason: `Rebalance ${channel} toward the plan's mix target` });
  }

  if (plan.countries) {
    j.categories.add('geography');
    const abroad = countries.filter((c) => !plan.countries!.includes(c));
    if (abroad.length) find('geography', 'critical', `Delivered in ${abroad.join(', ')}, outside the plan's markets (${plan.countries.join(', ')})`);
  }

  judgePolicies(plan, { channels, countries }, now, j, false);
  return decide(j, mode, `Approved: delivery within plan ${plan.plan_id}${spent !== undefined ? ` (${spent} of ${total} ${currency} spent)` : ''}`);
}
