import * as v from 'valibot';
import { defineTask } from '../../core/task.ts';
import { listNotFound, ownedList } from './access.ts';
import type { ListsDeps } from './deps.ts';
import type { KindSpec } from './kinds.ts';
import { accountRef, listId, versionFields } from './schemas.ts';
import { deleteList } from './store.ts';

/** delete_property_list / delete_collection_list: the list is gone, and its auth_token with it. */
export function deleteListTask(deps: ListsDeps, spec: KindSpec) {
  return defineTask({
    name: `delete_${spec.noun}`,
    description: `Delete a ${spec.noun.replace('_', ' ')}; its auth_token stops working.`,
    protocol: 'governance',
    requestSchema: `${spec.schemaDir}/delete-${spec.noun.replace('_', '-')}-request.json`,
    mutating: true,
    // Database only: the deletion commits with the idempotency record.
    transactional: true,
    input: v.looseObject({ ...versionFields, list_id: listId, account: v.optional(accountRef) }),
    async handler({ input, principal, tx }) {
      const q = tx ?? deps.db;
      const row = await ownedList(q, spec, principal, input.list_id, input.account);
      if (!(await deleteList(q, spec.kind, principal.orgId, row.list_id, row.account_id))) throw listNotFound(spec, input.list_id);
      return { deleted: true, list_id: row.list_id };
    },
  });
}
