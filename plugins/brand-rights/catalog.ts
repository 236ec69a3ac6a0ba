import * as v from 'valibot';

export const RIGHT_USES = [
  'likeness',
  'voice',
  'name',
  'endorsement',
  'motion_capture',
  'signature',
  'catchphrase',
  'sync',
  'background_music',
  'editorial',
  'commercial',
  'ai_generated_image',
] as const;
export const RIGHT_TYPES = ['talent', 'character', 'brand_ip', 'music', 'stock_media'] as const;
export const BILLING_PERIODS = ['daily', 'weekly', 'monthly', 'quarterly', 'annual', 'one_time'] as const;
export type RightUse = (typeof RIGHT_USES)[number];

const id = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$'));
const country = v.pipe(v.string(), v.regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code'));
const uses = v.pipe(v.array(v.picklist(RIGHT_USES)), v.minLength(1));

/** One way to pay for a right (brand/rights-pricing-option.json); `flat_rate` prices are the amount committed. */
export const pricingOptionOption = v.object({
  pricing_option_id: id,
  model: v.picklist(['cpm', 'flat_rate']),
  price: v.pipe(v.number(), v.minValue(0)),
  currency: v.pipe(v.string(), v.regex(/^[A-Z]{3}$/)),
  uses,
  period: v.optional(v.picklist(BILLING_PERIODS)),
  impression_cap: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  overage_cpm: v.optional(v.pipe(v.number(), v.minValue(0))),
});

/** A licensable right of a represented brand, as the operator declares it. */
export const rightOption = v.object({
  rights_id: id,
  /** The brand.json brand id (or domain) of a brand this agent represents. */
  brand_id: v.pipe(v.string(), v.minLength(1), v.maxLength(253)),
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
  description: v.optional(v.pipe(v.string(), v.maxLength(2000))),
  right_type: v.picklist(RIGHT_TYPES),
  available_uses: uses,
  countries: v.optional(v.array(country)),
  excluded_countries: v.optional(v.array(country)),
  content_restrictions: v.optional(v.array(v.pipe(v.string(), v.maxLength(500)))),
  pricing_options: v.pipe(v.array(pricingOptionOption), v.minLength(1)),
  /** Creatives need the brand's approval before they run (creative_approval answers pending_review). */
  approval_required: v.optional(v.boolean(), false),
});
export type Right = v.InferOutput<typeof rightOption>;
export type PricingOption = Right['pricing_options'][number];

/** Sandbox rights of the test agent's sandbox brands (plugins/test-agent/sandbox-brands.json). */
export const SANDBOX_RIGHTS: v.InferInput<typeof rightOption>[] = [
  {
    rights_id: 'rights_acme_outdoor_ai_imagery',
    brand_id: 'acme_outdoor',
    name: 'Acme Outdoor: AI-generated brand imagery',
    description: 'Generate display and social imagery with the Acme Outdoor marks, products and likeness of its brand ambassadors.',
    right_type: 'brand_ip',
    available_uses: ['ai_generated_image', 'likeness', 'commercial', 'editorial'],
    countries: ['US', 'CA'],
    content_restrictions: ['No depiction of unsafe outdoor practices', 'No competitor products in frame'],
    pricing_options: [
      {
        pricing_option_id: 'acme_ai_quarterly_flat',
        model: 'flat_rate',
        price: 45,
        currency: 'USD',
        uses: ['ai_generated_image', 'likeness', 'commercial', 'editorial'],
        period: 'quarterly',
      },
      {
        pricing_option_id: 'acme_ai_annual_flat',
        model: 'flat_rate',
        price: 150,
        currency: 'USD',
        uses: ['ai_generated_image', 'likeness', 'commercial', 'editorial'],
        period: 'annual',
      },
      {
        pricing_option_id: 'acme_ai_cpm',
        model: 'cpm',
        price: 2.5,
        currency: 'USD',
        uses: ['ai_generated_image', 'commercial'],
        impression_cap: 1_000_000,
        overage_cpm: 3,
      },
    ],
  },
  {
    rights_id: 'rights_acme_outdoor_ambassador',
    brand_id: 'acme_outdoor',
    name: 'Acme Outdoor: trail ambassador endorsement',
    description: 'Name, likeness and endorsement of the Acme Outdoor trail ambassador in commercial creative.',
    right_type: 'talent',
    available_uses: ['endorsement', 'likeness', 'name', 'commercial', 'voice'],
    countries: ['US'],
    pricing_options: [
      {
        pricing_option_id: 'acme_ambassador_quarterly',
        model: 'flat_rate',
        price: 2500,
        currency: 'USD',
        uses: ['endorsement', 'likeness', 'name', 'commercial', 'voice'],
        period: 'quarterly',
      },
    ],
    approval_required: true,
  },
  {
    // The brand the official conformance runner names when it asks for rights (its default brand, test.example).
    rights_id: 'rights_test_example_ai_imagery',
    brand_id: 'test.example',
    name: 'Test Brand: AI-generated imagery (sandbox)',
    right_type: 'brand_ip',
    available_uses: ['ai_generated_image', 'likeness', 'commercial', 'editorial'],
    pricing_options: [
      {
        pricing_option_id: 'test_ai_quarterly_flat',
        model: 'flat_rate',
        price: 45,
        currency: 'USD',
        uses: ['ai_generated_image', 'likeness', 'commercial', 'editorial'],
        period: 'quarterly',
      },
    ],
  },
  {
    rights_id: 'rights_nimbus_cola_jingle',
    brand_id: 'nimbus_cola',
    name: 'Nimbus Cola: "Light as a cloud" jingle',
    right_type: 'music',
    available_uses: ['sync', 'background_music', 'commercial'],
    pricing_options: [
      {
        pricing_option_id: 'nimbus_jingle_monthly',
        model: 'flat_rate',
        price: 800,
        currency: 'USD',
        uses: ['sync', 'background_music', 'commercial'],
        period: 'monthly',
      },
    ],
  },
  {
    rights_id: 'rights_nova_motors_volta_imagery',
    brand_id: 'nova_motors',
    name: 'Nova Motors: Volta EV generated imagery',
    right_type: 'brand_ip',
    available_uses: ['ai_generated_image', 'commercial'],
    pricing_options: [
      { pricing_option_id: 'nova_volta_cpm', model: 'cpm', price: 4, currency: 'USD', uses: ['ai_generated_image', 'commercial'], impression_cap: 500_000 },
    ],
  },
];

/** The rights a query asks for, best first: the share of the requested uses each covers, then catalog order. */
export function matchRights(
  catalog: readonly Right[],
  query: { uses: readonly RightUse[]; brand_id?: string; right_type?: string; countries?: readonly string[] },
): { right: Right; score: number; matched: RightUse[] }[] {
  const out: { right: Right; score: number; matched: RightUse[]; order: number }[] = [];
  catalog.forEach((right, order) => {
    if (query.brand_id && right.brand_id !== query.brand_id) return;
    if (query.right_type && right.right_type !== query.right_type) return;
    if (query.countries?.length && right.countries && !query.countries.some((c) => right.countries!.includes(c))) return;
    if (query.countries?.length && right.excluded_countries && query.countries.every((c) => right.excluded_countries!.includes(c))) return;
    const matched = query.uses.filter((u) => right.available_uses.includes(u));
    if (!matched.length) return;
    out.push({ right, score: matched.length / query.uses.length, matched, order });
  });
  return out.sort((a, b) => b.score - a.score || a.order - b.order);
}
