import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { sql } from '../../core/sql.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { RightsDeps } from './deps.ts';
import { commitment, lookup } from './acquire-rights.ts';
import { consultGovernance, governedPayload } from './governance.ts';
import { renderConstraint, renderCredentials } from './render.ts';
import { accountRef, date, entityId, pushConfig, versionFields } from './schemas.ts';
import { grantOf, updateGrant, type GrantRow, type Terms } from './store.ts';
import { grantNotFound, ownGrant } from './access.ts';
import { isGoverned, type AccountRow } from './accounts.ts';

/** The grant's terms after the requested change, or a 4xx naming the field. */
function changedTerms(
  deps: RightsDeps,
  grant: GrantRow,
  input: { end_date?: string; impression_cap?: number; pricing_option_id?: string },
  today: string,
): Terms {
  const terms: Terms = { ...grant.terms };
  if (input.pricing_option_id && input.pricing_option_id !== terms.pricing_option_id) {
    const { option } = lookup(deps, grant.rights_id, input.pricing_option_id);
    const uncovered = terms.uses.filter((u) => !option.uses.includes(u as never));
    if (uncovered.length)
      throw new ProtocolError('INVALID_REQUEST', `pricing_option_id: ${option.pricing_option_id} does not license ${uncovered.join(', ')}`, {
        field: 'pricing_option_id',
      });
    Object.assign(terms, { pricing_option_id: option.pricing_option_id, amount: option.price, currency: option.currency, period: option.period });
  }
  if (input.end_date) {
    // Spec (update-rights-request end_date): the new end date must be >= the current one.
    if (terms.end_date && input.end_date < terms.end_date)
      throw new ProtocolError('INVALID_REQUEST', `end_date: must not be before the grant's current end date ${terms.end_date}`, { field: 'end_date' });
    if (input.end_date < today) throw new ProtocolError('INVALID_REQUEST', 'end_date: must not be in the past', { field: 'end_date' });
    terms.end_date = input.end_date;
  }
  if (input.impression_cap) terms.impression_cap = input.impression_cap;
  return terms;
}

/** What a change adds to the licence's cost: a dearer option, or more capped impressions at a CPM. */
function addedCost(deps: RightsDeps, grant: GrantRow, terms: Terms): number {
  const right = deps.catalog.find((r) => r.rights_id === grant.rights_id);
  const option = (id: string) => right?.pricing_options.find((p) => p.pricing_option_id === id);
  const before = option(grant.terms.pricing_option_id);
  const after = option(terms.pricing_option_id);
  if (!before || !after) return 0;
  return Math.max(0, commitment(after, terms.impression_cap) - commitment(before, grant.terms.impression_cap));
}

/**
 * update_rights: extend a grant (end_date), change its impression cap or pricing option (one of the
 * same right's), pause or resume it. A revoked or pending grant cannot change. A change that adds
 * cost under a governed grant is a modification-phase governance check (asked before anything is
 * written; it may call out, so the write is its own transaction, refused if the grant changed meanwhile).
 */
export function updateRightsTask(deps: RightsDeps) {
  return defineTask({
    name: 'update_rights',
    description:
      'Change a rights grant of yours: extend end_date, impression_cap, pricing_option_id (of the same right), paused. Governed grants check added cost with governance. Answers the updated terms.',
    protocol: 'brand',
    requestSchema: 'brand/update-rights-request.json',
    mutating: true,
    input: v.looseObject({
      ...versionFields,
      rights_id: entityId,
      account: v.optional(accountRef),
      end_date: v.optional(date),
      impression_cap: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'))),
      pricing_option_id: v.optional(entityId),
      paused: v.optional(v.boolean()),
      push_notification_config: v.optional(pushConfig),
      /** The governance plan that funds added cost (defaults to the plan the grant was acquired under). */
      plan_id: v.optional(entityId),
    }),
    async handler(ctx) {
      const { input, clock, principal } = ctx;
      const grant = await ownGrant(deps.db, ctx, input.rights_id, input.account);
      if (grant.status !== 'acquired')
        throw new ProtocolError(
          'INVALID_STATE',
          grant.status === 'revoked'
            ? `Rights grant ${grant.grant_id} was revoked (${grant.revoked_reason ?? 'no reason given'}); acquire a new licence`
            : `Rights grant ${grant.grant_id} awaits the rights holder's approval; change it once acquired`,
          { status: 409, field: 'rights_id' },
        );
      const terms = changedTerms(deps, grant, input, clock.now().toISOString().slice(0, 10));
      const added = addedCost(deps, grant, terms);
      if (added > 0) {
        const [account] = await deps.db.query<AccountRow>(
          sql`SELECT account_id, brand_domain, operator FROM brand_rights_accounts WHERE account_id = ${grant.account_id}::text`,
        );
        await consultGovernance(deps, {
          owner: principal.orgId,
          governed: await isGoverned(deps.accounts, deps.db, principal.orgId, account ?? null),
          planId: input.plan_id ?? (grant.governance?.plan_id as string | undefined),
          payload: governedPayload(input),
          amount: added,
          currency: terms.currency,
          countries: grant.countries ?? undefined,
          startDate: terms.start_date,
          endDate: terms.end_date,
          phase: 'modification',
          tool: 'update_rights',
        });
      }
      const now = clock.now();
      const updated: GrantRow = { ...grant, terms, paused: input.paused ?? grant.paused, updated_at: now };
      await deps.db.transaction(async (tx) => {
        const current = await grantOf(tx, principal.orgId, grant.grant_id, true);
        if (!current) throw grantNotFound(grant.grant_id);
        if (current.updated_at.getTime() !== grant.updated_at.getTime() || current.status !== grant.status)
          throw new ProtocolError('CONFLICT', `Rights grant ${grant.grant_id} changed while this update was checked; retry`, {
            status: 409,
            field: 'rights_id',
          });
        await updateGrant(tx, updated);
      });
      const right = deps.catalog.find((r) => r.rights_id === grant.rights_id);
      return {
        rights_id: grant.grant_id,
        terms: terms as unknown as Json,
        generation_credentials: renderCredentials(updated),
        rights_constraint: renderConstraint(updated, right, deps.agentUrl),
        paused: updated.paused,
        implementation_date: now.toISOString(),
      };
    },
  });
}
