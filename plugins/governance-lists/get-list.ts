import * as v from 'valibot';
import { defineTask, type Json } from '../../core/task.ts';
import { readableList } from './access.ts';
import { decodeCursor, encodeCursor, fingerprint } from '../../lib/adcp/query-cursor.ts';
import type { ListsDeps } from './deps.ts';
import type { KindSpec } from './kinds.ts';
import { cacheValidUntil, renderList } from './render.ts';
import { accountRef, listId, listToken, resolvedPagination, versionFields } from './schemas.ts';

/**
 * get_property_list / get_collection_list: the list and (resolve, the default) its entries, a
 * page at a time (1,000 by default, at most 10,000). Read by the list's owner, or by whoever
 * presents its auth_token (sellers fetching the list the buyer shared with them).
 */
export function getListTask(deps: ListsDeps, spec: KindSpec) {
  return defineTask({
    name: `get_${spec.noun}`,
    description: `A ${spec.noun.replace('_', ' ')} and, with resolve (default true), its resolved ${spec.itemsField} (paginated). The owner's credential, or the list's auth_token in auth_token, grants access.`,
    protocol: 'governance',
    requestSchema: `${spec.schemaDir}/get-${spec.noun.replace('_', '-')}-request.json`,
    // A seller with only the list's token calls without a credential of this agent.
    auth: 'optional',
    input: v.looseObject({
      ...versionFields,
      list_id: listId,
      account: v.optional(accountRef),
      resolve: v.optional(v.boolean()),
      pagination: v.optional(resolvedPagination),
      /** The list's auth_token (from create_*_list), for readers that do not own it. */
      auth_token: v.optional(listToken),
    }),
    async handler({ input, principal, clock }) {
      const { row, owner } = await readableList(deps.db, spec, principal, input.list_id, input.account, input.auth_token);
      const body: Json = { list: renderList(spec, row, owner) };
      if (input.resolve === false) return body;
      const resolution = await spec.resolve(row.sources, row.filters, deps.catalog);
      const size = input.pagination?.max_results ?? 1000;
      // Bound to the list's version: a cursor of an earlier version of the list is refused.
      const print = fingerprint([row.list_id, row.updated_at.toISOString()]);
      const offset = input.pagination?.cursor ? decodeCursor<number>(input.pagination.cursor, print, 'number') : 0;
      const page = resolution.items.slice(offset, offset + size);
      const more = offset + page.length < resolution.items.length;
      const at = clock.now();
      body[spec.itemsField] = page;
      body.pagination = { has_more: more, total_count: resolution.items.length, ...(more ? { cursor: encodeCursor(offset + page.length, print) } : {}) };
      body.resolved_at = at.toISOString();
      body.cache_valid_until = cacheValidUntil(spec, at);
      if (Object.keys(resolution.gaps).length) body.coverage_gaps = resolution.gaps;
      return body;
    },
  });
}
