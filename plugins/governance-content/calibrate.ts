import * as v from 'valibot';
import { defineTask } from '../../core/task.ts';
import { ownedStandards } from './access.ts';
import type { ContentDeps } from './deps.ts';
import { policiesOf, renderFeatures } from './evaluate.ts';
import { accountRef, artifact, id, versionFields } from './schemas.ts';

/**
 * calibrate_content: judges one sample artifact against the configuration's current policies
 * (read at the call, so an update applies at once) and explains the verdict per policy.
 */
export function calibrateTask(deps: ContentDeps) {
  return defineTask({
    name: 'calibrate_content',
    description:
      'Judge a sample artifact against a content standards configuration before launch: verdict pass|fail (fail when a must-policy is violated) and, per policy, its status and the rule and text that decided it.',
    protocol: 'governance',
    requestSchema: 'content-standards/calibrate-content-request.json',
    mutating: true,
    input: v.looseObject({ ...versionFields, standards_id: id, account: v.optional(accountRef), artifact }),
    async handler({ input, principal }) {
      const row = await ownedStandards(deps.db, principal, input.standards_id, input.account);
      const e = await deps.evaluator.evaluate(policiesOf(row), { artifact: input.artifact });
      return {
        verdict: e.verdict,
        ...(e.confidence === undefined ? {} : { confidence: e.confidence }),
        explanation: e.explanation,
        features: renderFeatures(e),
      };
    },
  });
}
