import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import { findAccount, isGoverned, resolveAccount } from './accounts.ts';
import type { PricingOption, Right } from './catalog.ts';
import type { RightsDeps } from './deps.ts';
import { consultGovernance, governedPayload } from './governance.ts';
import { renderConstraint, renderCredentials } from './render.ts';
import { type AccountRef, accountRef, brandRef, countries, date, entityId, nonEmpty, pushConfig, rightUses, versionFields } from './schemas.ts';
import { grantById, insertGrant, updateGrant, type GrantRow, type Terms } from './store.ts';
import type { Queryable } from '../../core/ports/database.ts';

export const campaign = v.looseObject(
  {
    description: nonEmpty(2000),
    uses: rightUses,
    countries: v.optional(countries),
    format_ids: v.optional(v.array(v.unknown())),
    estimated_impressions: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must not be negative'))),
    start_date: v.optional(date),
    end_date: v.optional(date),
  },
  'must be an object {description, uses}',
);

/** The catalog right and pricing option a request names, or a 404 naming the field. */
export function lookup(deps: RightsDeps, rightsId: string, pricingOptionId: string): { right: Right; option: PricingOption } {
  const right = deps.catalog.find((r) => r.rights_id === rightsId);
  if (!right) throw new ProtocolError('REFERENCE_NOT_FOUND', `No right ${rightsId}: use a rights_id from get_rights`, { status: 404, field: 'rights_id' });
  const option = right.pricing_options.find((p) => p.pricing_option_id === pricingOptionId);
  if (!option)
    throw new ProtocolError('REFERENCE_NOT_FOUND', `Right ${rightsId} has no pricing option ${pricingOptionId}`, {
      status: 404,
      field: 'pricing_option_id',
      suggestion: `Pricing options: ${right.pricing_options.map((p) => p.pricing_option_id).join(', ')}`,
    });
  return { right, option };
}

/** What the licence commits: a flat rate is its price; a CPM its price over the estimated (or capped) impressions. */
export function commitment(option: PricingOption, impressions?: number): number {
  if (option.model === 'flat_rate') return option.price;
  const volume = impressions ?? option.impression_cap ?? 0;
  return Math.round(((option.price * volume) / 1000) * 100) / 100;
}

/**
 * acquire_rights: licence a right of the catalog under one of its pricing options for a campaign.
 * Refused before anything is written: unknown right or option, dates in the past or reversed, uses
 * or countries the option does not cover (`rejected` with the reason), and a governed account's
 * governance denial. The grant belongs to the caller's account; replays come from the idempotency
 * record.
 */
export function acquireRightsTask(deps: RightsDeps) {
  return defineTask({
    name: 'acquire_rights',
    description:
      'Acquire a licence for a right from get_rights under one of its pricing options, for a campaign (uses, countries, dates). Governed accounts are checked with their governance agent first. Answers the grant: terms, generation credentials and the rights constraint creatives carry.',
    protocol: 'brand',
    requestSchema: 'brand/acquire-rights-request.json',
    mutating: true,
    input: v.looseObject({
      ...versionFields,
      rights_id: entityId,
      pricing_option_id: entityId,
      buyer: brandRef,
      account: v.optional(accountRef),
      campaign,
      revocation_webhook: pushConfig,
      push_notification_config: v.optional(pushConfig),
      /** The governance plan that funds the licence (as create_media_buy's plan_id); required when the account is governed. */
      plan_id: v.optional(entityId),
    }),
    async handler({ input, principal, clock, ids, task }) {
      const { right, option } = lookup(deps, input.rights_id, input.pricing_option_id);
      const c = input.campaign;
      const today = clock.now().toISOString().slice(0, 10);
      // Spec (acquire-rights-request campaign.end_date): MUST reject an end date in the past at the time of the request.
      if (c.end_date && c.end_date < today)
        throw new ProtocolError('INVALID_REQUEST', `campaign.end_date: ${c.end_date} is in the past; rights are licensed for current or future campaigns`, {
          field: 'campaign.end_date',
        });
      if (c.start_date && c.end_date && c.end_date < c.start_date)
        throw new ProtocolError('INVALID_REQUEST', 'campaign.end_date: must not be before campaign.start_date', { field: 'campaign.end_date' });
      const base = { rights_id: input.rights_id, brand_id: right.brand_id };
      const uncovered = c.uses.filter((u) => !option.uses.includes(u) || !right.available_uses.includes(u));
      if (uncovered.length)
        return {
          ...base,
          rights_status: 'rejected',
          reason: `Pricing option ${option.pricing_option_id} does not license ${uncovered.join(', ')}`,
          suggestions: [`Licensed uses: ${option.uses.join(', ')}`],
        };
      const outside = (c.countries ?? []).filter((x) => (right.countries && !right.countries.includes(x)) || right.excluded_countries?.includes(x));
      if (outside.length)
        return {
          ...base,
          rights_status: 'rejected',
          reason: `Not licensable in ${outside.join(', ')}`,
          suggestions: right.countries ? [`Licensable in: ${right.countries.join(', ')}`] : [],
        };

      const owner = principal.orgId;
      // Governance is asked before the transaction (it may call out), so the account is only read here:
      // a new account has no governance agent yet, and is provisioned with the grant.
      const ref: AccountRef = input.account ?? { brand: { domain: input.buyer.domain }, operator: input.buyer.domain };
      const existing = await findAccount(deps.db, owner, ref);
      if (!existing && 'account_id' in ref)
        throw new ProtocolError('ACCOUNT_NOT_FOUND', `No account ${ref.account_id.slice(0, 128)} for this caller`, { status: 404, field: 'account' });
      const governed = await isGoverned(
        deps.accounts,
        deps.db,
        owner,
        existing ?? ('brand' in ref ? { account_id: '', brand_domain: ref.brand.domain, operator: ref.operator } : null),
      );
      // Spec (acquire-rights-request campaign.estimated_impressions): a governed CPM licence needs the volume to project its cost.
      if (governed && option.model === 'cpm' && !c.estimated_impressions)
        throw new ProtocolError('INVALID_REQUEST', 'campaign.estimated_impressions: is required for a CPM-priced licence under a governed account', {
          field: 'campaign.estimated_impressions',
        });
      const governance = await consultGovernance(deps, {
        owner,
        governed,
        planId: input.plan_id,
        payload: governedPayload(input),
        amount: commitment(option, c.estimated_impressions),
        currency: option.currency,
        countries: c.countries,
        startDate: c.start_date,
        endDate: c.end_date,
      });
      const terms: Terms = {
        pricing_option_id: option.pricing_option_id,
        amount: option.price,
        currency: option.currency,
        uses: c.uses,
        ...(option.period ? { period: option.period } : {}),
        ...(option.impression_cap ? { impression_cap: option.impression_cap } : {}),
        ...(option.overage_cpm !== undefined ? { overage_cpm: option.overage_cpm } : {}),
        ...(c.start_date ? { start_date: c.start_date } : {}),
        ...(c.end_date ? { end_date: c.end_date } : {}),
      };
      const now = clock.now();
      const grant: GrantRow = {
        grant_id: `grant_${ids.uuid7().replace(/-/g, '')}`,
        account_id: '',
        owner,
        rights_id: right.rights_id,
        brand_id: right.brand_id,
        status: 'acquired',
        paused: false,
        terms,
        countries: c.countries ?? null,
        rights_key: `rk_${ids.uuid7().replace(/-/g, '')}`,
        revocation_webhook: input.revocation_webhook as unknown as Json,
        governance,
        revoked_reason: null,
        created_at: now,
        updated_at: now,
      };
      const write = async (tx: Queryable) => {
        grant.account_id = (await resolveAccount(tx, { clock, ids }, owner, ref)).account_id;
        await insertGrant(tx, grant);
      };
      if (right.approval_required) {
        // The rights holder reviews first: the call answers `submitted` (the pending_approval arm) and
        // completes, through get_task_status or push_notification_config, with the grant once approved.
        grant.status = 'pending_approval';
        return task.defer({
          status: 'submitted',
          message: `Awaiting the approval of the rights holder of ${right.name}`,
          partial: {
            rights_id: grant.grant_id,
            rights_status: 'pending_approval',
            brand_id: right.brand_id,
            estimated_response_time: `PT${deps.approvalDelaySeconds}S`,
          },
          state: { grant_id: grant.grant_id },
          runAt: new Date(now.getTime() + deps.approvalDelaySeconds * 1000),
          within: write,
        });
      }
      await deps.db.transaction(write);
      return acquiredBody(deps, grant, right);
    },
    async resume({ state, clock }) {
      const grantId = state.grant_id as string;
      return deps.db.transaction(async (tx) => {
        const grant = await grantById(tx, grantId);
        if (!grant) throw new ProtocolError('REFERENCE_NOT_FOUND', `Rights grant ${grantId} no longer exists`, { status: 404 });
        const right = deps.catalog.find((r) => r.rights_id === grant.rights_id);
        if (grant.status === 'revoked' || !right)
          return { rights_id: grant.grant_id, rights_status: 'rejected', brand_id: grant.brand_id, reason: grant.revoked_reason ?? 'The right was withdrawn' };
        if (grant.status === 'pending_approval') {
          grant.status = 'acquired';
          await updateGrant(tx, { ...grant, updated_at: clock.now() });
        }
        return acquiredBody(deps, grant, right);
      });
    },
  });
}

/** The `acquired` arm of acquire-rights-response for a grant. */
function acquiredBody(deps: RightsDeps, grant: GrantRow, right: Right): Json {
  const body: Json = {
    rights_id: grant.grant_id,
    rights_status: 'acquired',
    brand_id: right.brand_id,
    terms: grant.terms as unknown as Json,
    generation_credentials: renderCredentials(grant),
    rights_constraint: renderConstraint(grant, right, deps.agentUrl),
  };
  if (right.content_restrictions?.length) body.restrictions = right.content_restrictions;
  if (grant.terms.uses.includes('ai_generated_image'))
    body.disclosure = { required: true, text: `AI-generated content licensed from ${right.name.split(':')[0]}` };
  return body;
}
