import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask } from '../../core/task.ts';
import { ownedStandards } from './access.ts';
import type { ContentDeps } from './deps.ts';
import { accountRef, calibrationExemplars, id, policies, registryPolicyIds, scopePatch, versionFields } from './schemas.ts';
import { saveStandards } from './store.ts';

/**
 * update_content_standards: replaces the members given (policies as a whole; scope members one by
 * one). Each update is a new version: later calibrations judge against it, never a cached one.
 */
export function updateStandardsTask(deps: ContentDeps) {
  return defineTask({
    name: 'update_content_standards',
    description: 'Update a content standards configuration: the given policies replace the current ones; scope members given replace theirs.',
    protocol: 'governance',
    requestSchema: 'content-standards/update-content-standards-request.json',
    mutating: true,
    transactional: true,
    // update-content-standards-response.json: the error variant carries success: false.
    failureBody: { success: false },
    input: v.looseObject({
      ...versionFields,
      standards_id: id,
      account: v.optional(accountRef),
      scope: v.optional(scopePatch),
      registry_policy_ids: v.optional(registryPolicyIds),
      policies: v.optional(policies),
      calibration_exemplars: v.optional(calibrationExemplars),
    }),
    async handler({ input, principal, clock, tx }) {
      const q = tx ?? deps.db;
      const row = await ownedStandards(q, principal, input.standards_id, input.account);
      const scope = { ...row.scope };
      for (const [k, value] of Object.entries(input.scope ?? {})) if (value !== undefined) (scope as Record<string, unknown>)[k] = value;
      const next = {
        ...row,
        scope,
        registry_policy_ids: input.registry_policy_ids ?? row.registry_policy_ids,
        policies: input.policies ?? row.policies,
        calibration_exemplars: input.calibration_exemplars ?? row.calibration_exemplars,
        version: row.version + 1,
        updated_at: clock.now(),
      };
      if (!(await saveStandards(q, next, row.version))) {
        throw new ProtocolError('CONFLICT', `Content standards ${row.standards_id} changed meanwhile; read them again and retry`, {
          status: 409,
          field: 'standards_id',
        });
      }
      return { success: true, standards_id: row.standards_id };
    },
  });
}
