import type { Json } from '../../core/task.ts';
import type { PricingOption, Right } from './catalog.ts';
import type { GrantRow } from './store.ts';

const compact = (o: Record<string, unknown>): Json => Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined && x !== null)) as Json;

/** brand/rights-pricing-option.json */
export function renderPricingOption(p: PricingOption): Json {
  return compact({ ...p });
}

/** One entry of get_rights' `rights`. */
export function renderRight(r: Right, score: number, reasons: string[]): Json {
  return compact({
    rights_id: r.rights_id,
    brand_id: r.brand_id,
    name: r.name,
    description: r.description,
    right_type: r.right_type,
    match_score: Math.round(score * 1000) / 1000,
    match_reasons: reasons,
    available_uses: r.available_uses,
    countries: r.countries,
    excluded_countries: r.excluded_countries,
    exclusivity_status: { available: true, existing_exclusives: [] },
    pricing_options: r.pricing_options.map(renderPricingOption),
    content_restrictions: r.content_restrictions,
  });
}

/** The end of the grant's last day (UTC), when it has an end date. */
export const endOfDay = (date: string | undefined) => (date ? `${date}T23:59:59Z` : undefined);

/** core/generation-credential.json of a grant: the key a generation provider checks with this agent. */
export function renderCredentials(g: GrantRow): Json[] {
  return [compact({ provider: 'brand-agent', rights_key: g.rights_key, uses: g.terms.uses, expires_at: endOfDay(g.terms.end_date) })];
}

/** core/rights-constraint.json: what a creative carries to prove its licence. */
export function renderConstraint(g: GrantRow, right: Right | undefined, agentUrl: string): Json {
  return compact({
    rights_id: g.grant_id,
    rights_agent: { url: agentUrl, id: 'brand-agent' },
    valid_from: g.terms.start_date ? `${g.terms.start_date}T00:00:00Z` : g.created_at.toISOString(),
    valid_until: endOfDay(g.terms.end_date),
    uses: g.terms.uses,
    countries: g.countries ?? undefined,
    excluded_countries: right?.excluded_countries,
    impression_cap: g.terms.impression_cap,
    right_type: right?.right_type,
    approval_status: 'approved',
  });
}
