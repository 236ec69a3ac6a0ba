import * as v from 'valibot';
import { defineTask, type Json } from '../../core/task.ts';
import { namedAccount } from './accounts.ts';
import { decodeCursor, encodeCursor, fingerprint } from '../../lib/adcp/query-cursor.ts';
import type { ListsDeps } from './deps.ts';
import type { KindSpec } from './kinds.ts';
import { renderList } from './render.ts';
import { accountRef, pagination, versionFields } from './schemas.ts';
import { queryLists } from './store.ts';

/** list_property_lists / list_collection_lists: the caller's lists (of one account, or all), by name, in creation order. */
export function listListsTask(deps: ListsDeps, spec: KindSpec) {
  return defineTask({
    name: `list_${spec.noun}s`,
    description: `The caller's ${spec.noun.replace('_', ' ')}s (metadata, not resolved entries), of one account or all, filtered by name_contains; cursor pagination (50 per page by default, at most 100).`,
    protocol: 'governance',
    requestSchema: `${spec.schemaDir}/list-${spec.noun.replace('_', '-')}s-request.json`,
    input: v.looseObject({
      ...versionFields,
      account: v.optional(accountRef),
      name_contains: v.optional(v.pipe(v.string('must be a string'), v.maxLength(256, 'must be at most 256 characters'))),
      pagination: v.optional(pagination),
    }),
    async handler({ input, principal }) {
      const owner = principal.orgId;
      const accountId = await namedAccount(deps.db, owner, input.account);
      const size = input.pagination?.max_results ?? 50;
      const print = fingerprint([spec.kind, input.account ?? null, input.name_contains ?? null]);
      const after = input.pagination?.cursor ? decodeCursor<string>(input.pagination.cursor, print, 'string') : undefined;
      if (accountId === null) return { lists: [], pagination: { has_more: false, total_count: 0 } };
      const { rows, total } = await queryLists(deps.db, {
        kind: spec.kind,
        owner,
        accountId,
        nameContains: input.name_contains || undefined,
        after,
        limit: size + 1,
      });
      const page = rows.slice(0, size);
      const more = rows.length > size;
      const body: Json = {
        lists: page.map((r) => renderList(spec, r, true)),
        pagination: { has_more: more, total_count: total, ...(more ? { cursor: encodeCursor(page[page.length - 1]!.list_id, print) } : {}) },
      };
      return body;
    },
  });
}
