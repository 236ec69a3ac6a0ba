import * as v from 'valibot';
import { CHANNELS } from '../../lib/adcp/channels.ts';

/** A plan of sync_plans (governance/sync-plans-request.json `plans[]`): both versions forbid unknown members. */

const PURCHASE_TYPES = ['media_buy', 'rights_license', 'signal_activation', 'creative_services'] as const;
/** Categories whose plans a person must review (the schema's conditional). */
const HUMAN_REVIEW_CATEGORIES = ['fair_housing', 'fair_lending', 'fair_employment', 'pharmaceutical_advertising'];

const text = (max: number) => v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(max, `must be at most ${max} characters`));
const timestamp = v.pipe(v.string('must be an ISO 8601 timestamp'), v.isoTimestamp('must be an ISO 8601 timestamp with a time zone'));
const date = v.pipe(v.string(), v.isoDate('must be a date YYYY-MM-DD'));
const url = v.pipe(v.string(), v.maxLength(2048), v.url('must be an absolute URL'));
const money = v.pipe(v.number('must be a number'), v.finite(), v.minValue(0, 'must be at least 0'), v.maxValue(1e12, 'is too large'));
const currency = v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code'));
const channel = v.picklist(CHANNELS, `must be one of ${CHANNELS.join(', ')}`);
const ids = (max = 100) => v.pipe(v.array(text(128)), v.maxLength(max));
const exemplar = v.strictObject({ scenario: text(2000), explanation: text(2000) });
const amount = v.strictObject({ amount: money, currency });

export const policyEntry = v.strictObject({
  policy_id: text(128),
  source: v.optional(v.picklist(['registry', 'inline'])),
  version: v.optional(text(64)),
  name: v.optional(text(200)),
  category: v.optional(v.picklist(['regulation', 'standard'])),
  enforcement: v.picklist(['must', 'should', 'may'], 'must be must, should or may'),
  requires_human_review: v.optional(v.boolean()),
  jurisdictions: v.optional(v.pipe(v.array(text(16)), v.maxLength(250))),
  region_aliases: v.optional(v.record(v.string(), v.array(v.string()))),
  policy_categories: v.optional(ids()),
  channels: v.optional(v.pipe(v.array(channel), v.maxLength(CHANNELS.length))),
  governance_domains: v.optional(v.array(v.picklist(['campaign', 'property', 'creative', 'content_standards']))),
  effective_date: v.optional(date),
  sunset_date: v.optional(date),
  source_url: v.optional(url),
  source_name: v.optional(text(200)),
  policy: v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(5000, 'must be at most 5000 characters')),
  guidance: v.optional(v.pipe(v.string(), v.maxLength(5000))),
  exemplars: v.optional(v.strictObject({ pass: v.optional(v.array(exemplar)), fail: v.optional(v.array(exemplar)) })),
  ext: v.optional(v.record(v.string(), v.unknown())),
});
export type PolicyEntry = v.InferOutput<typeof policyEntry>;

const budget = v.pipe(
  v.strictObject({
    total: money,
    currency,
    per_seller_max_pct: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100, 'must be at most 100'))),
    reallocation_threshold: v.optional(money),
    reallocation_unlimited: v.optional(v.literal(true, 'must be true when present')),
    allocations: v.optional(
      v.record(
        v.picklist(PURCHASE_TYPES),
        v.strictObject({ amount: v.optional(money), max_pct: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100))) }),
      ),
    ),
  }),
  v.check(
    (b) => (b.reallocation_threshold === undefined) !== (b.reallocation_unlimited === undefined),
    'give exactly one of reallocation_threshold and reallocation_unlimited',
  ),
);

export const planInput = v.pipe(
  v.strictObject({
    plan_id: v.pipe(v.string('is required'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$')),
    brand: v.object({
      domain: v.pipe(
        v.string('is required'),
        v.maxLength(253),
        v.regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/, 'must be a lowercase domain name'),
      ),
    }),
    objectives: text(2000),
    budget,
    channels: v.optional(
      v.strictObject({
        required: v.optional(v.array(channel)),
        allowed: v.optional(v.array(channel)),
        mix_targets: v.optional(v.record(v.string(), v.strictObject({ min_pct: v.optional(v.number()), max_pct: v.optional(v.number()) }))),
      }),
    ),
    flight: v.pipe(
      v.strictObject({ start: timestamp, end: timestamp }),
      v.forward(
        v.check((f) => new Date(f.end) > new Date(f.start), 'must be after flight.start'),
        ['end'],
      ),
    ),
    countries: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code'))), v.minLength(1), v.maxLength(250))),
    regions: v.optional(v.pipe(v.array(text(64)), v.minLength(1), v.maxLength(500))),
    policy_ids: v.optional(ids()),
    policy_categories: v.optional(v.pipe(ids(), v.minLength(1))),
    audience: v.optional(v.record(v.string(), v.unknown())),
    restricted_attributes: v.optional(v.pipe(v.array(v.string()), v.minLength(1))),
    restricted_attributes_custom: v.optional(v.pipe(v.array(text(200)), v.minLength(1))),
    min_audience_size: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    human_review_required: v.optional(v.boolean()),
    custom_policies: v.optional(v.pipe(v.array(policyEntry), v.maxLength(100, 'accepts at most 100 policies'))),
    approved_sellers: v.optional(v.nullable(v.pipe(v.array(url), v.maxLength(500)))),
    delegations: v.optional(
      v.array(
        v.strictObject({
          agent_url: url,
          authority: v.picklist(['full', 'execute_only', 'propose_only']),
          budget_limit: v.optional(amount),
          markets: v.optional(v.array(v.string())),
          expires_at: v.optional(timestamp),
        }),
      ),
    ),
    portfolio: v.optional(v.record(v.string(), v.unknown())),
    ext: v.optional(v.record(v.string(), v.unknown())),
  }),
  v.forward(
    v.check(
      (p) =>
        p.human_review_required === true ||
        (!(p.policy_categories ?? []).some((c) => HUMAN_REVIEW_CATEGORIES.includes(c)) && !(p.policy_ids ?? []).includes('eu_ai_act_annex_iii')),
      'must be true for plans in fair housing, lending or employment, pharmaceutical advertising, or under eu_ai_act_annex_iii',
    ),
    ['human_review_required'],
  ),
);
export type Plan = v.InferOutput<typeof planInput>;
