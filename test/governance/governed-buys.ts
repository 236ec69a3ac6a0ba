import { HOUR, type SalesWorld } from '../sales/fixture.ts';

/** 20,000 USD over the test flight, CTV only, at most 40% (8,000) with one seller. */
export const governedPlan = (planId: string) => ({
  plan_id: planId,
  brand: { domain: 'acme.example' },
  objectives: 'Launch',
  budget: { total: 20_000, currency: 'USD', per_seller_max_pct: 40, reallocation_unlimited: true },
  flight: { start: '2026-03-01T00:00:00Z', end: '2026-04-01T00:00:00Z' },
  channels: { allowed: ['ctv'] },
  countries: ['US'],
});

/** A two-day CTV buy starting in an hour, under the plan when one is named. */
export function governedBuy(w: SalesWorld, idempotencyKey: string, accountId: string, planId: string | undefined, budget: number) {
  const start = w.clock.now().getTime() + HOUR;
  return {
    idempotency_key: idempotencyKey,
    account: { account_id: accountId },
    ...(planId ? { plan_id: planId } : {}),
    start_time: new Date(start).toISOString(),
    end_time: new Date(start + 48 * HOUR).toISOString(),
    packages: [{ product_id: 'ctv_sports_premium', pricing_option_id: 'ctv_sports_cpm_fixed', budget }],
  };
}
