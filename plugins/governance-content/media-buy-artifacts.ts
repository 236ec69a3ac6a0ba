import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import { namedAccount } from './accounts.ts';
import { decodeCursor, encodeCursor, fingerprint } from '../../lib/adcp/query-cursor.ts';
import type { ContentDeps } from './deps.ts';
import { accountRef, dateTime, nonEmpty, versionFields } from './schemas.ts';
import { buyKnown, queryArtifacts, type ArtifactRow } from './store.ts';

const mediaBuyNotFound = (id: string) =>
  new ProtocolError('MEDIA_BUY_NOT_FOUND', `No artifacts recorded for media buy ${id.slice(0, 128)} for this caller`, { status: 404, field: 'media_buy_id' });

const render = (r: ArtifactRow): Json => ({
  record_id: r.record_id,
  timestamp: new Date(r.delivered_at).toISOString(),
  ...(r.package_id ? { package_id: r.package_id } : {}),
  artifact: r.artifact,
  ...(r.country ? { country: r.country } : {}),
  ...(r.channel ? { channel: r.channel } : {}),
  ...(r.local_verdict ? { local_verdict: r.local_verdict } : {}),
});

/**
 * get_media_buy_artifacts: the content artifacts recorded for one of the caller's media buys, in
 * delivery order. The sales plugins keep no record of delivered content: artifacts are those pushed
 * to the artifact webhook (artifact-webhook.ts) or seeded by the test controller (seed_media_buy_artifacts).
 */
export function mediaBuyArtifactsTask(deps: ContentDeps) {
  return defineTask({
    name: 'get_media_buy_artifacts',
    description:
      "Content artifacts recorded for one of the caller's media buys (package_ids, failures_only, time_range narrow them), in delivery order; cursor pagination (1000 per page by default, at most 10000).",
    protocol: 'governance',
    requestSchema: 'content-standards/get-media-buy-artifacts-request.json',
    input: v.looseObject({
      ...versionFields,
      account: v.optional(accountRef),
      media_buy_id: nonEmpty(256),
      package_ids: v.optional(v.pipe(v.array(nonEmpty(256)), v.minLength(1, 'must not be empty'), v.maxLength(500))),
      failures_only: v.optional(v.boolean()),
      time_range: v.optional(v.looseObject({ start: v.optional(dateTime), end: v.optional(dateTime) })),
      pagination: v.optional(
        v.strictObject({
          max_results: v.optional(
            v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(10_000, 'must be at most 10000')),
          ),
          cursor: v.optional(v.pipe(v.string(), v.maxLength(512))),
        }),
      ),
    }),
    async handler({ input, principal }) {
      const owner = principal.orgId;
      const accountId = await namedAccount(deps.db, owner, input.account);
      if (accountId === null || !(await buyKnown(deps.db, owner, input.media_buy_id, accountId))) throw mediaBuyNotFound(input.media_buy_id);
      const size = input.pagination?.max_results ?? 1000;
      const print = fingerprint([input.media_buy_id, input.account ?? null, input.package_ids ?? null, input.failures_only ?? false, input.time_range ?? null]);
      const position = input.pagination?.cursor ? decodeCursor<string>(input.pagination.cursor, print, 'string') : undefined;
      const after = position ? (JSON.parse(position) as [string, string]) : undefined;
      const { rows, total } = await queryArtifacts(deps.db, {
        owner,
        mediaBuyId: input.media_buy_id,
        accountId,
        packageIds: input.package_ids,
        failuresOnly: input.failures_only,
        start: input.time_range?.start,
        end: input.time_range?.end,
        after,
        limit: size + 1,
      });
      const page = rows.slice(0, size);
      const more = rows.length > size;
      const last = page[page.length - 1];
      return {
        media_buy_id: input.media_buy_id,
        artifacts: page.map(render),
        collection_info: { total_collected: total, returned_count: page.length },
        pagination: {
          has_more: more,
          total_count: total,
          ...(more && last ? { cursor: encodeCursor(JSON.stringify([new Date(last.delivered_at).toISOString(), last.record_id]), print) } : {}),
        },
      };
    },
  });
}
