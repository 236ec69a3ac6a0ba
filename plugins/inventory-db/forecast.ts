import type { Forecast, ForecastRequest, Product } from '../../core/ports/inventory.ts';

const DAY = 86_400_000;
const round = (n: number) => Math.max(0, Math.round(n));

/**
 * Delivery estimate from availability and price: the budget buys impressions at the option's
 * price (fixed, or 10% above the floor for auctions), never more than the flight can deliver;
 * low/high are the usual +/-15% band. Without a budget, the whole flight's availability.
 */
export function forecastProduct(product: Product, request: ForecastRequest): Forecast {
  const option = product.pricing_options.find((o) => o.pricing_option_id === request.pricingOptionId) ?? product.pricing_options[0]!;
  const days = request.start && request.end ? Math.max(1, (request.end.getTime() - request.start.getTime()) / DAY) : 30;
  const available = product.daily_avails * days;
  const price = option.fixed_price ?? (option.floor_price ?? 0) * 1.1;
  let impressions = available;
  if (request.budget !== undefined && price > 0) {
    if (option.pricing_model === 'cpc') impressions = product.ctr > 0 ? request.budget / price / product.ctr : available;
    else if (option.pricing_model === 'flat_rate') impressions = available;
    else impressions = (request.budget / price) * 1000;
  }
  const mid = Math.min(impressions, available);
  const budget = request.budget ?? (option.pricing_model === 'flat_rate' ? price : (mid / 1000) * price);
  return {
    currency: option.currency,
    budget: Math.round(budget * 100) / 100,
    impressions: { low: round(mid * 0.85), mid: round(mid), high: round(Math.min(mid * 1.15, available)) },
    clicks: { low: round(mid * 0.85 * product.ctr), mid: round(mid * product.ctr), high: round(Math.min(mid * 1.15, available) * product.ctr) },
    available_impressions: round(available),
  };
}
