import type { BrandPortfolio, BrandProfile, PortfolioBrand, PortfolioTrademark } from '../../core/ports/brand-profiles.ts';
import type { Json } from '../../core/task.ts';

/** A verification question (one verify_brand_claim call, or one entry of verify_brand_claims), as validated. */
export type Claim =
  | { claim_type: 'subsidiary'; claim: { subsidiary_domain: string; subsidiary_brand_id?: string } }
  | { claim_type: 'parent'; claim: { parent_domain: string } }
  | { claim_type: 'property'; claim: { property: { type: string; identifier: string; store?: string } } }
  | { claim_type: 'trademark'; claim: { mark: string; registry?: string; number?: string; countries?: string[] } };

export type VerificationStatus = 'owned' | 'archived' | 'disputed' | 'not_ours' | 'licensed_in' | 'licensed_out' | 'unknown';

/** The answer to one claim; `error` for a claim the data cannot answer unambiguously. */
export type ClaimAnswer =
  | { verification_status: VerificationStatus; details?: Json; context_note?: string }
  | { error: { code: string; message: string; field: string; recovery: 'correctable' } };

/** Answers that confirm the brand holds (or held, or licenses) the thing: they pick the subject brand of a multi-brand agent. */
const AFFIRMATIVE: ReadonlySet<VerificationStatus> = new Set(['owned', 'archived', 'licensed_in', 'licensed_out']);
export const isAffirmative = (a: ClaimAnswer) => 'verification_status' in a && AFFIRMATIVE.has(a.verification_status);

const lower = (s: string) => s.trim().toLowerCase();
/** Websites compare by host, without a leading `www.`; other identifiers (bundle ids, store ids) case-insensitively. */
const propertyKey = (type: string, identifier: string) => (type === 'website' ? lower(identifier).replace(/^www\./, '') : lower(identifier));

/**
 * The brand's place in its house portfolio: whether it is the house, its own brand entry, the brands
 * it owns (the house: all of them; a brand: those naming it as `parent_brand`) and the inline brands whose
 * properties and marks are its own (the house: every inline brand; a brand: itself).
 */
function standing(domain: string, brandId: string | undefined, p: BrandPortfolio) {
  const isHouse = p.house_domain === domain;
  const self = p.brands.find((b) => b.domains.includes(domain) || (!!brandId && b.brand_id === brandId));
  const subsidiaries = isHouse ? p.brands.filter((b) => b !== self) : p.brands.filter((b) => !!self?.brand_id && b.parent_brand === self.brand_id);
  const holdings: PortfolioBrand[] = isHouse ? p.brands.filter((b) => !b.ref) : self ? [self] : [];
  return { isHouse, self, subsidiaries, holdings };
}

function subsidiary(domain: string, brandId: string | undefined, p: BrandPortfolio, claim: Extract<Claim, { claim_type: 'subsidiary' }>['claim']): ClaimAnswer {
  const target = lower(claim.subsidiary_domain);
  const found = standing(domain, brandId, p).subsidiaries.find((b) => b.domains.includes(target));
  if (!found) return { verification_status: 'not_ours', context_note: `${target} is not a brand of ${domain} in its brand.json portfolio.` };
  const details: Json = {};
  if (found.brand_id) details.brand_id = found.brand_id;
  if (found.ref?.effective_at) details.first_observed_by_house_at = found.ref.effective_at;
  if (claim.subsidiary_brand_id && found.brand_id && claim.subsidiary_brand_id !== found.brand_id)
    return {
      verification_status: 'disputed',
      details,
      context_note: `${target} is ours under brand_id ${found.brand_id}, not ${claim.subsidiary_brand_id}.`,
    };
  return { verification_status: 'owned', ...(Object.keys(details).length ? { details } : {}) };
}

function parent(domain: string, p: BrandPortfolio, claim: Extract<Claim, { claim_type: 'parent' }>['claim']): ClaimAnswer {
  const claimed = lower(claim.parent_domain);
  if (p.house_domain === domain) return { verification_status: 'disputed', context_note: `${domain} is a house itself; it has no parent.` };
  if (p.house_domain === claimed) return { verification_status: 'owned', details: { house_domain: p.house_domain } };
  return { verification_status: 'disputed', details: { house_domain: p.house_domain }, context_note: `Our house is ${p.house_domain}, not ${claimed}.` };
}

function property(domain: string, brandId: string | undefined, p: BrandPortfolio, claim: Extract<Claim, { claim_type: 'property' }>['claim']): ClaimAnswer {
  const wanted = claim.property;
  const key = propertyKey(wanted.type, wanted.identifier);
  for (const brand of standing(domain, brandId, p).holdings) {
    const found = brand.properties.find(
      (x) => x.type === wanted.type && propertyKey(x.type, x.identifier) === key && (!wanted.store || !x.store || x.store === wanted.store),
    );
    if (!found) continue;
    const details: Json = { relationship: found.relationship };
    if (brand.brand_id) details.brand_id = brand.brand_id;
    if (found.region) details.regions = [found.region];
    // Only an owned property is ours; a direct, delegated or network path is run under the owner's authorization.
    if (found.relationship === 'owned') return { verification_status: 'owned', details };
    return { verification_status: 'licensed_in', details, context_note: `We are a ${found.relationship} sales path for this property, not its owner.` };
  }
  return { verification_status: 'not_ours', context_note: `${wanted.identifier.slice(0, 200)} is not a property of ${domain} in its brand.json.` };
}

function markStatus(t: PortfolioTrademark): VerificationStatus {
  if (t.status === 'abandoned' || t.status === 'cancelled' || t.status === 'expired') return 'archived';
  return t.license_type as VerificationStatus;
}

function trademark(domain: string, brandId: string | undefined, p: BrandPortfolio, claim: Extract<Claim, { claim_type: 'trademark' }>['claim']): ClaimAnswer {
  const { isHouse, holdings } = standing(domain, brandId, p);
  // House-level marks belong to the house; each brand's marks to it (and to the house, which owns the brand).
  const marks = [...(isHouse ? p.trademarks : []), ...holdings.flatMap((b) => b.trademarks)];
  const countries = claim.countries?.map((c) => c.toUpperCase());
  const matches = marks.filter(
    (t) =>
      lower(t.mark) === lower(claim.mark) &&
      (!claim.registry || lower(t.registry) === lower(claim.registry)) &&
      (!claim.number || t.number.replace(/\s/g, '') === claim.number.replace(/\s/g, '')) &&
      (!countries?.length || !t.countries || t.countries.some((c) => countries.includes(c))),
  );
  if (!matches.length) return { verification_status: 'not_ours', context_note: `No registration of ${claim.mark.slice(0, 200)} held by ${domain} matches.` };
  if (new Set(matches.map(markStatus)).size > 1)
    return {
      error: {
        code: 'INVALID_REQUEST',
        message: `Several registrations of ${claim.mark.slice(0, 200)} match with different standing (${matches.map((t) => t.registry).join(', ')}); give registry, number or countries`,
        field: 'claim.registry',
        recovery: 'correctable',
      },
    };
  const t = matches[0]!;
  const details: Json = { matched_registration: { registry: t.registry, number: t.number, mark: t.mark, registration_status: t.status } };
  if (t.licensor_domain) details.licensor_domain = t.licensor_domain;
  if (t.countries) details.countries = t.countries;
  if (t.nice_classes) details.nice_classes = t.nice_classes;
  return { verification_status: markStatus(t), details };
}

/**
 * The portfolio a brand's claims are answered from: its own brand.json's, or, when that names a house
 * without listing the brand (a house redirect), the house's portfolio if it lists the brand back: both
 * sides assert the tie. `get` reads a domain's profile from the registry.
 */
export async function portfolioOf(
  domain: string,
  profile: BrandProfile | null,
  get: (domain: string) => Promise<BrandProfile | null>,
): Promise<BrandPortfolio | undefined> {
  const own = profile?.portfolio;
  if (!own || own.house_domain === domain || own.brands.some((b) => b.domains.includes(domain))) return own;
  const house = (await get(own.house_domain))?.portfolio;
  return house?.house_domain === own.house_domain && house.brands.some((b) => b.domains.includes(domain)) ? house : own;
}

/**
 * The answer of one represented brand to a claim, from the portfolio of its authoritative brand.json as the
 * registry holds it. Without one (no registry entry, or community data only) the brand has no position: `unknown`.
 */
export function answerClaim(domain: string, brandId: string | undefined, p: BrandPortfolio | undefined, claim: Claim): ClaimAnswer {
  if (!p) return { verification_status: 'unknown', context_note: `The registry holds no brand.json portfolio for ${domain}.` };
  switch (claim.claim_type) {
    case 'subsidiary':
      return subsidiary(domain, brandId, p, claim.claim);
    case 'parent':
      return parent(domain, p, claim.claim);
    case 'property':
      return property(domain, brandId, p, claim.claim);
    case 'trademark':
      return trademark(domain, brandId, p, claim.claim);
  }
}
