import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { BrandPortfolio, BrandProfilesPort } from '../../core/ports/brand-profiles.ts';
import type { ResponseSignerPort } from '../../core/ports/signer.ts';
import type { ClockPort } from '../../core/ports/clock.ts';
import type { Logger } from '../../core/log.ts';
import { timestamp, versionFields } from '../../lib/adcp/request-fields.ts';
import { signResponsePayload } from '../../lib/signer/response-jws.ts';
import { answerClaim, isAffirmative, portfolioOf, type Claim, type ClaimAnswer } from './claims.ts';
import type { RepresentedBrand } from './get-brand-identity.ts';
import { domainControl, type DomainControlDeps } from './domain-control.ts';

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const hostname = v.pipe(v.string('must be a string'), v.regex(HOSTNAME, 'must be a hostname such as brand.example'));
const text = (max: number) => v.pipe(v.string('must be a string'), v.maxLength(max, `must be at most ${max} characters`));
const PROPERTY_TYPES = ['website', 'mobile_app', 'ctv_app', 'desktop_app', 'dooh', 'podcast', 'radio', 'streaming_audio'] as const;
const STORES = ['apple', 'google', 'amazon', 'roku', 'fire_tv', 'samsung', 'lg', 'vizio', 'other'] as const;

/** One claim (verify-brand-claim-request's oneOf, the batch's claim_entry); extra members are kept, as the schema allows. */
const claimEntry = v.variant(
  'claim_type',
  [
    v.looseObject({
      claim_type: v.literal('subsidiary'),
      claim: v.looseObject({
        subsidiary_domain: hostname,
        subsidiary_brand_id: v.optional(v.pipe(v.string('must be a string'), v.regex(/^[a-z0-9_]+$/, 'must be lower-case letters, digits or _'))),
        observed_at: v.optional(timestamp),
      }),
    }),
    v.looseObject({
      claim_type: v.literal('parent'),
      claim: v.looseObject({ parent_domain: hostname, claimant_says: v.optional(text(2000)), observed_at: v.optional(timestamp) }),
    }),
    v.looseObject({
      claim_type: v.literal('property'),
      claim: v.looseObject({
        property: v.looseObject({
          type: v.picklist(PROPERTY_TYPES, `must be one of ${PROPERTY_TYPES.join(', ')}`),
          identifier: v.pipe(text(2048), v.minLength(1, 'must not be empty')),
          store: v.optional(v.picklist(STORES, `must be one of ${STORES.join(', ')}`)),
          region: v.optional(text(16)),
        }),
        use_case: v.optional(text(100)),
      }),
    }),
    v.looseObject({
      claim_type: v.literal('trademark'),
      claim: v.looseObject({
        mark: v.pipe(text(200), v.minLength(1, 'must not be empty')),
        registry: v.optional(text(50)),
        number: v.optional(text(100)),
        countries: v.optional(
          v.pipe(v.array(v.pipe(v.string(), v.length(2, 'must be a two-letter country code'))), v.maxLength(250, 'must list at most 250 countries')),
        ),
        use_case: v.optional(text(100)),
      }),
    }),
  ],
  'must be one of subsidiary, parent, property, trademark',
);

/** Which represented brand answers (extension: a multi-brand agent's callers name it; brand_id or domain as in get_brand_identity). */
const brandField = { brand_id: v.optional(v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(253))) };

const single = v.intersect([claimEntry, v.looseObject({ ...brandField, ...versionFields })]);
const batch = v.looseObject({
  claims: v.pipe(
    v.array(claimEntry, 'must be an array of claims'),
    v.minLength(1, 'must hold at least one claim'),
    v.maxLength(100, 'must hold at most 100 claims'),
  ),
  ...brandField,
  ...versionFields,
});

export interface ClaimTaskDeps {
  brands: readonly RepresentedBrand[];
  profiles: BrandProfilesPort;
  signer: ResponseSignerPort;
  clock: ClockPort;
  logger: Logger;
  /** The agent entry whose response-signing key verifies the answers (`agent_url` of the signed payload). */
  agentUrl: string;
  ttlSeconds: number;
  /** The registry's proofs of domain control, when it runs in this deployment; absent, the brand.json alone answers. */
  control?: DomainControlDeps;
}

/**
 * The brand answering a call, derived server-side: the one named by `brand_id`, the only one, or (a
 * multi-brand agent asked without a name) the represented brand whose data affirms most claims, the
 * first listed on a tie. Every claim of the call is answered from that brand's data, weighed against
 * the registry's proofs of domain control where the deployment has them.
 */
async function answer(deps: ClaimTaskDeps, claims: readonly Claim[], brandId: string | undefined): Promise<{ domain: string; answers: ClaimAnswer[] }> {
  let candidates = deps.brands;
  if (brandId !== undefined) {
    const id = brandId.toLowerCase();
    candidates = deps.brands.filter((b) => b.brand_id?.toLowerCase() === id || b.domain === id);
    if (!candidates.length)
      throw new ProtocolError('REFERENCE_NOT_FOUND', `This agent does not represent a brand ${brandId.slice(0, 128)}`, {
        status: 404,
        field: 'brand_id',
        suggestion: `Represented brands: ${deps.brands.map((b) => b.brand_id ?? b.domain).join(', ') || 'none'}`,
      });
  }
  if (!candidates.length) throw new ProtocolError('REFERENCE_NOT_FOUND', 'This agent represents no brand', { status: 404 });
  const weigh = deps.control
    ? await domainControl(
        deps.control,
        candidates.map((b) => b.domain),
        claims,
      )
    : undefined;
  let best: { domain: string; answers: ClaimAnswer[]; score: number } | null = null;
  for (const brand of candidates) {
    let portfolio: BrandPortfolio | undefined;
    try {
      portfolio = await portfolioOf(brand.domain, await deps.profiles.get(brand.domain), (d) => deps.profiles.get(d));
    } catch (error) {
      deps.logger.warn({ err: error, domain: brand.domain }, 'brand registry could not be asked');
      throw new ProtocolError('SERVICE_UNAVAILABLE', 'The brand registry cannot be reached; retry later', { status: 503, recovery: 'transient' });
    }
    const answers = claims.map((c) => {
      const a = answerClaim(brand.domain, brand.brand_id, portfolio, c);
      return weigh ? weigh(brand.domain, c, a) : a;
    });
    const score = answers.filter(isAffirmative).length;
    if (!best || score > best.score) best = { domain: brand.domain, answers, score };
  }
  return best!;
}

const bindingClaim = (c: Claim & Json) => ({ claim_type: c.claim_type, claim: c.claim });

export function verifyBrandClaimTasks(deps: ClaimTaskDeps) {
  const sign = (namespace: string, task: string, brandDomain: string, requestBinding: Json, response: Json) =>
    signResponsePayload({
      key: deps.signer.active(),
      namespace,
      task,
      brandDomain,
      agentUrl: deps.agentUrl,
      requestBinding,
      response,
      now: deps.clock.now(),
      ttlSeconds: deps.ttlSeconds,
    });

  const verifyOne = defineTask({
    name: 'verify_brand_claim',
    description:
      "Ask the brand whether its own data confirms a claim about it: a subsidiary (house side), its parent house, a property, or a trademark. Answered from the brand's brand.json as the registry holds it, weighed against the registry's proofs of domain control where it has them (details.evidence, or disputed when another registrant proved the domain); the answer carries a signed_response (payload JWS under the agent's response-signing key).",
    protocol: 'brand',
    requestSchema: 'brand/verify-brand-claim-request.json',
    auth: 'optional',
    input: single,
    async handler({ input, principal, namespace }) {
      const claim = input as unknown as Claim & Json;
      const { domain, answers } = await answer(deps, [claim], input.brand_id);
      const a = answers[0]!;
      if ('error' in a) throw new ProtocolError(a.error.code, a.error.message, { status: 400, field: a.error.field, recovery: a.error.recovery });
      const response: Json = { claim_type: claim.claim_type, ...a };
      const binding = { task: 'verify_brand_claim', caller_identity: principal.id, ...bindingClaim(claim) };
      return { ...response, signed_response: await sign(namespace, 'verify_brand_claim', domain, binding, response) };
    },
  });

  const verifyMany = defineTask({
    name: 'verify_brand_claims',
    description:
      'Bulk verify_brand_claim: up to 100 claims in one call, results in the same order (a claim the data cannot answer unambiguously carries its own error); one signed_response over all results.',
    protocol: 'brand',
    requestSchema: 'brand/verify-brand-claims-request.json',
    auth: 'optional',
    input: batch,
    async handler({ input, principal, namespace }) {
      const claims = input.claims as unknown as Array<Claim & Json>;
      const { domain, answers } = await answer(deps, claims, input.brand_id);
      const results = answers.map((a, i) => {
        if ('error' in a) return { error: a.error };
        const { verification_status, ...rest } = a;
        return { claim_type: claims[i]!.claim_type, status: verification_status, ...rest };
      });
      const response: Json = { results };
      const binding = { task: 'verify_brand_claims', caller_identity: principal.id, claims: claims.map(bindingClaim) };
      return { ...response, signed_response: await sign(namespace, 'verify_brand_claims', domain, binding, response) };
    },
  });

  return [verifyOne, verifyMany];
}
