import * as v from 'valibot';
import { defineTask, type Json } from '../../core/task.ts';
import { namedAccount } from './accounts.ts';
import { decodeCursor, encodeCursor, fingerprint } from '../../lib/adcp/query-cursor.ts';
import type { ContentDeps } from './deps.ts';
import { renderStandards } from './render.ts';
import { accountRef, channels, countries, languages, pagination, versionFields } from './schemas.ts';
import { queryStandards } from './store.ts';

/** list_content_standards: the caller's configurations (of one account, or all), filtered by scope, in creation order. */
export function listStandardsTask(deps: ContentDeps) {
  return defineTask({
    name: 'list_content_standards',
    description:
      "The caller's content standards configurations, of one account or all; channels, languages and countries keep those whose scope lists any of them. Cursor pagination (50 per page by default, at most 100).",
    protocol: 'governance',
    requestSchema: 'content-standards/list-content-standards-request.json',
    input: v.looseObject({
      ...versionFields,
      account: v.optional(accountRef),
      channels: v.optional(channels),
      languages: v.optional(languages),
      countries: v.optional(countries),
      pagination: v.optional(pagination),
    }),
    async handler({ input, principal }) {
      const owner = principal.orgId;
      const size = input.pagination?.max_results ?? 50;
      const print = fingerprint([input.account ?? null, input.channels ?? null, input.languages ?? null, input.countries ?? null]);
      const after = input.pagination?.cursor ? decodeCursor<string>(input.pagination.cursor, print, 'string') : undefined;
      const accountId = await namedAccount(deps.db, owner, input.account);
      if (accountId === null) return { standards: [], pagination: { has_more: false, total_count: 0 } };
      const { rows, total } = await queryStandards(deps.db, {
        owner,
        accountId,
        channels: input.channels,
        languages: input.languages,
        countries: input.countries,
        after,
        limit: size + 1,
      });
      const page = rows.slice(0, size);
      const more = rows.length > size;
      const body: Json = {
        standards: page.map(renderStandards),
        pagination: { has_more: more, total_count: total, ...(more ? { cursor: encodeCursor(page[page.length - 1]!.standards_id, print) } : {}) },
      };
      return body;
    },
  });
}
