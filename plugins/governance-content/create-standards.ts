import * as v from 'valibot';
import { defineTask } from '../../core/task.ts';
import { owningAccount } from './accounts.ts';
import type { ContentDeps } from './deps.ts';
import { accountRef, calibrationExemplars, nonEmpty, policies, registryPolicyIds, scope, versionFields } from './schemas.ts';
import { insertStandards, type StandardsRow } from './store.ts';
import { ProtocolError } from '../../core/errors.ts';

/** create_content_standards: a new configuration of an account (scope, policies, exemplars). */
export function createStandardsTask(deps: ContentDeps) {
  return defineTask({
    name: 'create_content_standards',
    description:
      'Create a content standards configuration of an account: scope (languages, channels, countries) and policies (policy_id, enforcement must|should|may, policy text). Answers its standards_id.',
    protocol: 'governance',
    requestSchema: 'content-standards/create-content-standards-request.json',
    mutating: true,
    transactional: true,
    input: v.looseObject({
      ...versionFields,
      account: v.optional(accountRef),
      // Not in the request schema (which allows more members): a label list_content_standards shows.
      name: v.optional(nonEmpty(256)),
      scope,
      registry_policy_ids: v.optional(registryPolicyIds),
      policies: v.optional(policies),
      calibration_exemplars: v.optional(calibrationExemplars),
    }),
    async handler({ input, principal, clock, ids, tx }) {
      // Registry policies are not resolved by this agent: a configuration needs bespoke policies to be judged.
      if (!input.policies) {
        throw new ProtocolError('INVALID_REQUEST', 'policies: required (this agent does not resolve registry_policy_ids; pass bespoke policies)', {
          field: 'policies',
        });
      }
      const q = tx ?? deps.db;
      const now = clock.now();
      const r: StandardsRow = {
        standards_id: `cs_${ids.uuid7().replace(/-/g, '')}`,
        owner: principal.orgId,
        // No account named (the request schema has none): the caller's standards, outside any account.
        account_id: input.account ? await owningAccount(deps, q, principal.orgId, input.account) : null,
        name: input.name ?? input.scope.description ?? null,
        scope: input.scope,
        registry_policy_ids: input.registry_policy_ids ?? null,
        policies: input.policies,
        calibration_exemplars: input.calibration_exemplars ?? null,
        version: 1,
        created_at: now,
        updated_at: now,
      };
      await insertStandards(q, r);
      return { standards_id: r.standards_id };
    },
  });
}
