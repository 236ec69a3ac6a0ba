import * as v from 'valibot';
import { defineTask } from '../../core/task.ts';
import { ownedStandards } from './access.ts';
import type { ContentDeps } from './deps.ts';
import { renderStandards } from './render.ts';
import { accountRef, id, versionFields } from './schemas.ts';

/** get_content_standards: one configuration of the caller (of the named account, when one is named). */
export function getStandardsTask(deps: ContentDeps) {
  return defineTask({
    name: 'get_content_standards',
    description: 'A content standards configuration of the caller: scope and policies.',
    protocol: 'governance',
    requestSchema: 'content-standards/get-content-standards-request.json',
    input: v.looseObject({ ...versionFields, standards_id: id, account: v.optional(accountRef) }),
    async handler({ input, principal }) {
      return renderStandards(await ownedStandards(deps.db, principal, input.standards_id, input.account));
    },
  });
}
