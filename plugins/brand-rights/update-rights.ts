import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { RightsDeps } from './deps.ts';
import { lookup } from './acquire-rights.ts';
import { renderConstraint, renderCredentials } from './render.ts';
import { accountRef, date, entityId, pushConfig, versionFields } from './schemas.ts';
import { updateGrant, type GrantRow, type Terms } from './store.ts';
import { ownGrant } from './access.ts';

/**
 * update_rights: extend or shorten a grant (end_date), change its impression cap or pricing option
 * (one of the same right's), pause or resume it. A revoked grant cannot change. Runs in the call's
 * transaction: a refusal writes nothing.
 */
export function updateRightsTask(deps: RightsDeps) {
  return defineTask({
    name: 'update_rights',
    description: 'Change a rights grant of yours: end_date, impression_cap, pricing_option_id (of the same right), paused. Answers the updated terms.',
    protocol: 'brand',
    requestSchema: 'brand/update-rights-request.json',
    mutating: true,
    transactional: true,
    input: v.looseObject({
      ...versionFields,
      rights_id: entityId,
      account: v.optional(accountRef),
      end_date: v.optional(date),
      impression_cap: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'))),
      pricing_option_id: v.optional(entityId),
      paused: v.optional(v.boolean()),
      push_notification_config: v.optional(pushConfig),
    }),
    async handler(ctx) {
      const { input, clock } = ctx;
      const tx = ctx.tx ?? deps.db;
      const grant = await ownGrant(tx, ctx, input.rights_id, input.account);
      if (grant.status === 'pending_approval')
        throw new ProtocolError('INVALID_STATE', `Rights grant ${grant.grant_id} awaits the rights holder's approval; change it once acquired`, {
          status: 409,
          field: 'rights_id',
        });
      if (grant.status === 'revoked')
        throw new ProtocolError(
          'INVALID_STATE',
          `Rights grant ${grant.grant_id} was revoked (${grant.revoked_reason ?? 'no reason given'}); acquire a new licence`,
          {
            status: 409,
            field: 'rights_id',
          },
        );
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
        if (terms.start_date && input.end_date < terms.start_date)
          throw new ProtocolError('INVALID_REQUEST', 'end_date: must not be before the grant start_date', { field: 'end_date' });
        if (input.end_date < clock.now().toISOString().slice(0, 10))
          throw new ProtocolError('INVALID_REQUEST', 'end_date: must not be in the past', { field: 'end_date' });
        terms.end_date = input.end_date;
      }
      if (input.impression_cap) terms.impression_cap = input.impression_cap;
      const now = clock.now();
      const updated: GrantRow = { ...grant, terms, paused: input.paused ?? grant.paused, updated_at: now };
      await updateGrant(tx, updated);
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
