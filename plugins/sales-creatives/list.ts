import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { FormatRef } from '../../core/ports/inventory.ts';
import { accountRef, pagination, versionFields } from '../../lib/adcp/request-fields.ts';
import { decodeOffset, fingerprint, pageInfo } from '../../lib/adcp/query-cursor.ts';
import type { CreativesDeps } from './deps.ts';
import { libraryAccountId } from './store.ts';
import { BatchedRead, byWish, wishRows } from '../../lib/batched-read.ts';

/** Assigned creatives an assignment filter names: [account id, creative id] pairs. */
type Keys = Array<[string, string]>;
/** A list_creatives page the batched statement reads: the caller, its filters (null: none) and the page. */
interface LibraryWish {
  owner: string;
  account_id: string | null;
  creative_ids: string[] | null;
  statuses: string[] | null;
  tags: string[] | null;
  tags_any: string[] | null;
  /** name_contains, lower case. */
  name: string | null;
  in_buys: Keys | null;
  in_packages: Keys | null;
  assigned: Keys | null;
  limit: number;
  offset: number;
}
const among = (keys: 'in_buys' | 'in_packages' | 'assigned') =>
  sql`(c.account_id, c.creative_id) IN (SELECT k->>0, k->>1 FROM jsonb_array_elements(r.${sql.raw(keys)}) AS k)`;
/** The filters of a shape, on the wish `r`; each but `unassigned` is named after the member of the wish it reads. */
const FILTERS = {
  account_id: sql`c.account_id = r.account_id`,
  creative_ids: sql`c.creative_id = ANY(r.creative_ids)`,
  statuses: sql`c.status = ANY(r.statuses)`,
  tags: sql`c.tags @> r.tags`,
  tags_any: sql`c.tags && r.tags_any`,
  name: sql`strpos(lower(c.name), r.name) > 0`,
  in_buys: among('in_buys'),
  in_packages: among('in_packages'),
  assigned: among('assigned'),
  unassigned: sql`NOT ${among('assigned')}`,
};
type LibraryFilter = keyof typeof FILTERS;

interface LibraryRow {
  account_id: string;
  creative_id: string;
  name: string;
  format_id: FormatRef;
  status: string;
  tags: string[];
  created_at: Date;
  updated_at: Date;
  total: number;
}

/** Pages of every caller listing at once, one statement per round and filter shape (BatchedRead). */
function libraryPages(deps: CreativesDeps) {
  return new BatchedRead<LibraryWish, LibraryRow[]>(async (shape, wishes) => {
    const where = [sql`c.owner = r.owner`, ...(shape ? shape.split(',').map((f) => FILTERS[f as LibraryFilter]) : [])];
    const rows = await deps.db.query<LibraryRow & { i: number }>(sql`
      SELECT c.* FROM ${wishRows(
        wishes,
        'owner text, account_id text, creative_ids text[], statuses text[], tags text[], tags_any text[], name text, in_buys jsonb, in_packages jsonb, assigned jsonb, "limit" int, "offset" int',
      )}
      CROSS JOIN LATERAL (
        SELECT r.i, c.account_id, c.creative_id, c.name, c.format_id, c.status, c.tags, c.created_at, c.updated_at, count(*) OVER ()::int AS total
        FROM sales_creatives c WHERE ${sql.join(where, ' AND ')}
        ORDER BY c.created_at, c.account_id, c.creative_id LIMIT r."limit" OFFSET r."offset") c
      ORDER BY c.i, c.created_at, c.account_id, c.creative_id`);
    return byWish(rows, wishes.length);
  });
}

export function listCreativesTask(deps: CreativesDeps) {
  const pages = libraryPages(deps);
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
      // A sandbox fixture account id nobody created narrows nothing (still only the caller's creatives).
      const accountId = input.account ? await libraryAccountId(deps, owner, input.account, 'account') : null;
      // Assignment filters: the media buys know which creatives are assigned where.
      const packagesSide = deps.packages();
      const keysOf = async (filter: { mediaBuyIds?: readonly string[]; packageIds?: readonly string[] }) => {
        const keys = packagesSide ? await packagesSide.assigned(deps.db, owner, filter) : [];
        return keys.map((k): Keys[number] => [k.account_id, k.creative_id]);
      };
      const limit = input.pagination?.max_results ?? 50;
      const print = fingerprint([f, input.account]);
      const offset = decodeOffset(input.pagination?.cursor, print);
      const wish: LibraryWish = {
        owner,
        account_id: accountId,
        creative_ids: f.creative_ids ?? null,
        statuses: f.statuses ?? null,
        tags: f.tags ?? null,
        tags_any: f.tags_any ?? null,
        name: f.name_contains?.toLowerCase() ?? null,
        in_buys: f.media_buy_ids ? await keysOf({ mediaBuyIds: f.media_buy_ids }) : null,
        in_packages: f.assigned_to_packages ? await keysOf({ packageIds: f.assigned_to_packages }) : null,
        assigned: f.unassigned !== undefined ? await keysOf({}) : null,
        limit,
        offset,
      };
      const filters = (Object.keys(FILTERS) as LibraryFilter[]).filter((k) =>
        k === 'assigned' ? f.unassigned === false : k === 'unassigned' ? f.unassigned === true : wish[k as keyof LibraryWish] !== null,
      );
      const rows = await pages.read(filters.join(','), wish);
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
