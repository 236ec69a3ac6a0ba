import type { BrandHoldersPort } from '../../core/ports/brand-holders.ts';
import type { DomainProof, OwnershipPort } from '../../core/ports/ownership.ts';
import { normalizeDomain } from '../../lib/domain.ts';
import type { Claim, ClaimAnswer } from './claims.ts';

/** The registry's proofs of domain control and its brand entries' holders (registry-ownership, registry-brands in this deployment). */
export interface DomainControlDeps {
  ownership: OwnershipPort;
  holders: BrandHoldersPort;
}

/** Weighs one represented brand's answer to a claim against the registry's proofs. */
export type Weigh = (brandDomain: string, claim: Claim, answer: ClaimAnswer) => ClaimAnswer;

/** The domain a claim names as the brand's (a website, a subsidiary) or its house's (a parent); websites without `www.`. */
export function claimedDomain(claim: Claim): string | undefined {
  let raw: string;
  if (claim.claim_type === 'subsidiary') raw = claim.claim.subsidiary_domain;
  else if (claim.claim_type === 'parent') raw = claim.claim.parent_domain;
  else if (claim.claim_type === 'property' && claim.claim.property.type === 'website') raw = claim.claim.property.identifier;
  else return undefined;
  try {
    const domain = normalizeDomain(raw);
    return claim.claim_type === 'property' ? domain.replace(/^www\.(?=.+\..)/, '') : domain;
  } catch {
    return undefined;
  }
}

/**
 * Reads, in one query, the current proofs of every domain the claims name, and returns how they bear
 * on an answer the brand.json confirms (`owned`): a proof by the brand's holder adds
 * `details.evidence`; a website proven only by other organizations makes the claim `disputed`. A house
 * and its brands often register apart, so another registrant's proof of a parent or subsidiary domain
 * disputes nothing. The holder is the
 * organization holding the brand's registry entry, or (an entry no organization holds, such as a crawled
 * brand.json) those with a current proof of the brand's own domain; with none, proofs decide nothing.
 * Other answers, and domains nobody has proven, stand as the brand.json gives them.
 */
export async function domainControl(deps: DomainControlDeps, brandDomains: readonly string[], claims: readonly Claim[]): Promise<Weigh> {
  const named = new Set(claims.map(claimedDomain).filter((d) => d !== undefined));
  if (!named.size) return (_brand, _claim, answer) => answer;
  const [holders, proofs] = await Promise.all([
    Promise.all(brandDomains.map(async (d) => [d, await deps.holders.holder(d)] as const)),
    deps.ownership.currentProofs([...new Set([...named, ...brandDomains])]),
  ]);
  const byDomain = new Map<string, DomainProof[]>();
  for (const p of proofs) byDomain.set(p.domain, [...(byDomain.get(p.domain) ?? []), p]);
  const holding = new Map(holders.map(([brand, holder]) => [brand, new Set(holder ? [holder] : (byDomain.get(brand) ?? []).map((p) => p.orgId))] as const));

  return (brandDomain, claim, answer) => {
    if (!('verification_status' in answer) || answer.verification_status !== 'owned') return answer;
    const domain = claimedDomain(claim);
    const proven = domain ? byDomain.get(domain) : undefined;
    const orgs = holding.get(brandDomain);
    if (!domain || !proven || !orgs?.size) return answer;
    // Newest first: the holder's latest proof is the evidence.
    const own = proven.find((p) => orgs.has(p.orgId));
    if (own) {
      const evidence = { type: 'registry_domain_control', domain, verification_method: own.method, verified_at: own.provenAt.toISOString() };
      return { ...answer, details: { ...(answer.details as Record<string, unknown> | undefined), evidence } };
    }
    if (claim.claim_type !== 'property') return answer;
    return {
      verification_status: 'disputed',
      ...(answer.details ? { details: answer.details } : {}),
      context_note: `Control of ${domain} is proven in the registry by a different registrant than the one holding this brand's entry.`,
    };
  };
}
