import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { FormatRef } from '../../core/ports/inventory.ts';
import { accountRef, pagination, versionFields } from '../../lib/adcp/request-fields.ts';
import { decodeOffset, fingerprint, pageInfo } from '../../lib/adcp/query-cursor.ts';
import type { CreativesDeps } from './deps.ts';
import { libraryAccountId } from './store.ts';

export function listCreativesTask(deps: CreativesDeps) {
  return defineTask({
    name: 'list_creatives',
    description: "The caller's creative library: filter by ids, status, tags, name, media buys or packages; assignments on request; cursor pagination.",
    protocol: 'media_buy',
    // The library is the creative agent's too (CreativeStore): its mounts serve it.
    servedWith: ['creative'],
    input: v.object({
      ...versionFields,
      account: v.optional(accountRef),
      filters: v.optional(
        v.object({
          creative_ids: v.optional(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(500))),
          statuses: v.optional(v.pipe(v.array(v.picklist(['processing', 'pending_review', 'approved', 'suspended', 'rejected', 'archived'])), v.minLength(1))),
          tags: v.optional(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(50))),
          tags_any: v.optional(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(50))),
          name_contains: v.optional(v.pipe(v.string(), v.maxLength(200))),
          media_buy_ids: v.optional(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(100))),
          assigned_to_packages: v.optional(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(500))),
          unassigned: v.optional(v.boolean()),
        }),
      ),
      include_assignments: v.optional(v.boolean()),
      pagination,
    }),
    async handler({ input, principal }) {
      const owner = principal.orgId;
      const f = input.filters ?? {};
      const where = [sql`c.owner = ${owner}::text`];
      if (input.account) {
        // A sandbox fixture account id nobody created narrows nothing (still only the caller's creatives).
        const accountId = await libraryAccountId(deps, owner, input.account, 'account');
        if (accountId) where.push(sql`c.account_id = ${accountId}::text`);
      }
      if (f.creative_ids) where.push(sql`c.creative_id = ANY(${f.creative_ids}::text[])`);
      if (f.statuses) where.push(sql`c.status = ANY(${f.statuses}::text[])`);
      if (f.tags) where.push(sql`c.tags @> ${f.tags}::text[]`);
      if (f.tags_any) where.push(sql`c.tags && ${f.tags_any}::text[]`);
      if (f.name_contains) where.push(sql`strpos(lower(c.name), ${f.name_contains.toLowerCase()}::text) > 0`);
      // Assignment filters: the media buys know which creatives are assigned where.
      const packagesSide = deps.packages();
      const keysOf = async (filter: { mediaBuyIds?: readonly string[]; packageIds?: readonly string[] }) => {
        const keys = packagesSide ? await packagesSide.assigned(deps.db, owner, filter) : [];
        return sql`(c.account_id, c.creative_id) IN (SELECT * FROM unnest(${keys.map((k) => k.account_id)}::text[], ${keys.map((k) => k.creative_id)}::text[]))`;
      };
      if (f.media_buy_ids) where.push(await keysOf({ mediaBuyIds: f.media_buy_ids }));
      if (f.assigned_to_packages) where.push(await keysOf({ packageIds: f.assigned_to_packages }));
      if (f.unassigned !== undefined) where.push(f.unassigned ? sql`NOT ${await keysOf({})}` : await keysOf({}));
      const limit = input.pagination?.max_results ?? 50;
      const print = fingerprint([f, input.account]);
      const offset = decodeOffset(input.pagination?.cursor, print);
      const rows = await deps.db.query<{
        account_id: string;
        creative_id: string;
        name: string;
        format_id: FormatRef;
        status: string;
        tags: string[];
        created_at: Date;
        updated_at: Date;
        total: number;
      }>(sql`
        SELECT c.account_id, c.creative_id, c.name, c.format_id, c.status, c.tags, c.created_at, c.updated_at, count(*) OVER ()::int AS total
        FROM sales_creatives c WHERE ${sql.join(where, ' AND ')}
        ORDER BY c.created_at, c.account_id, c.creative_id LIMIT ${limit}::int OFFSET ${offset}::int`);
      const assignments = new Map<string, Array<{ package_id: string; assigned_at: Date }>>();
      if (input.include_assignments && packagesSide) {
        for (const accountId of new Set(rows.map((r) => r.account_id))) {
          const ids = rows.filter((r) => r.account_id === accountId).map((r) => r.creative_id);
          for (const [id, list] of await packagesSide.assignmentsOf(deps.db, accountId, ids)) assignments.set(`${accountId} ${id}`, list);
        }
      }
      const total = rows[0]?.total ?? 0;
      const creatives = rows.map((r) => {
        const out: Json = {
          creative_id: r.creative_id,
          name: r.name,
          format_id: r.format_id,
          status: r.status,
          created_date: new Date(r.created_at).toISOString(),
          updated_date: new Date(r.updated_at).toISOString(),
        };
        if (r.tags.length) out.tags = r.tags;
        if (input.include_assignments) {
          const list = (assignments.get(`${r.account_id} ${r.creative_id}`) ?? []).map((a) => ({
            package_id: a.package_id,
            assigned_date: new Date(a.assigned_at).toISOString(),
          }));
          out.assignments = { assignment_count: list.length, assigned_packages: list };
        }
        return out;
      });
      return {
        query_summary: { total_matching: total, returned: creatives.length },
        pagination: pageInfo(offset, creatives.length, total, print),
        creatives,
      };
    },
  });
}
