import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { FormatRef } from '../../core/ports/inventory.ts';
import { accountRef, pagination, versionFields } from '../../lib/adcp/media-buy-fields.ts';
import { creative, type CreativeInput } from './schemas.ts';
import { structuredFormatId } from './formats-input.ts';
import { canonicalJson } from '../../lib/canonical-json.ts';
import { formatKey } from './formats.ts';
import { decodeOffset, fingerprint, pageInfo } from '../../lib/adcp/offset-cursor.ts';
import { addHistory, loadBuy, loadPackages, updateBuy, type PackageRow } from './buys/store.ts';
import { requireAction, requireTransition } from './buys/status.ts';
import { dueAt } from './buys/due.ts';
import type { SalesDeps } from './deps.ts';

/** A creative whose format id was checked with its creative agent. */
export interface PreparedCreative {
  input: CreativeInput;
  format: FormatRef;
  key: string;
}

function checkAssetUrls(c: CreativeInput, field: string): void {
  for (const [name, asset] of Object.entries(c.assets)) {
    const url = (asset as { url?: unknown }).url;
    if (url === undefined) continue;
    if (typeof url !== 'string' || url.length > 2048 || !/^https?:\/\/[^\s]+$/i.test(url) || !URL.canParse(url)) {
      throw new ProtocolError('INVALID_REQUEST', `${field}.assets.${name}.url: must be an absolute http(s) URL`, { field: `${field}.assets.${name}.url` });
    }
  }
}

/**
 * Validate creatives before anything is written: structured format ids (INVALID_FORMAT_ID),
 * defined by the creative agent their `agent_url` names (asked through the port or the network),
 * asset URLs http(s). Throws on the first problem, naming its field.
 */
export async function prepareCreatives(deps: SalesDeps, creatives: readonly CreativeInput[], field: string): Promise<PreparedCreative[]> {
  const prepared = creatives.map((c, i) => {
    const format = structuredFormatId(c.format_id, `${field}[${i}].format_id`);
    checkAssetUrls(c, `${field}[${i}]`);
    return { input: c, format, key: formatKey(format) };
  });
  const ids = prepared.map((p) => p.input.creative_id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup) throw new ProtocolError('INVALID_REQUEST', `${field}: creative_id ${dup} appears twice`, { field });
  const known = await deps.formats.check(prepared.map((p) => p.format));
  prepared.forEach((p, i) => {
    if (!known.get(p.key)) {
      throw new ProtocolError('INVALID_FORMAT_ID', `${field}[${i}].format_id: ${p.format.id} is not a format of the creative agent ${p.format.agent_url}`, {
        field: `${field}[${i}].format_id`,
        suggestion: "Use a format listed by that agent's list_creative_formats",
      });
    }
  });
  return prepared;
}

/** Upsert creatives into the account's library; returns each one's action. */
export async function writeCreatives(
  tx: Queryable,
  owner: string,
  accountId: string,
  prepared: readonly PreparedCreative[],
  now: Date,
): Promise<Map<string, 'created' | 'updated' | 'unchanged'>> {
  const actions = new Map<string, 'created' | 'updated' | 'unchanged'>();
  for (const p of prepared) {
    const c = p.input;
    const tags = c.tags ?? [];
    const [old] = await tx.query<{ name: string; format_key: string; assets: unknown; tags: string[] }>(sql`
      SELECT name, format_key, assets, tags FROM sales_creatives WHERE account_id = ${accountId}::text AND creative_id = ${c.creative_id}::text FOR UPDATE`);
    if (!old) {
      await tx.query(sql`
        INSERT INTO sales_creatives (account_id, creative_id, owner, name, format_id, format_key, assets, tags, status, created_at, updated_at)
        VALUES (${accountId}::text, ${c.creative_id}::text, ${owner}::text, ${c.name}::text, ${p.format}::jsonb, ${p.key}::text, ${c.assets}::jsonb,
                ${tags}::text[], 'approved', ${now}::timestamptz, ${now}::timestamptz)`);
      actions.set(c.creative_id, 'created');
      continue;
    }
    const same =
      old.name === c.name &&
      old.format_key === p.key &&
      canonicalJson(old.assets) === canonicalJson(c.assets) &&
      canonicalJson(old.tags) === canonicalJson(tags);
    if (!same) {
      await tx.query(sql`UPDATE sales_creatives SET name = ${c.name}::text, format_id = ${p.format}::jsonb, format_key = ${p.key}::text, assets = ${c.assets}::jsonb,
        tags = ${tags}::text[], updated_at = ${now}::timestamptz WHERE account_id = ${accountId}::text AND creative_id = ${c.creative_id}::text`);
    }
    actions.set(c.creative_id, same ? 'unchanged' : 'updated');
  }
  return actions;
}

/** A creative fits a package when its format is one the package accepts. */
export function fits(pkg: PackageRow, key: string): boolean {
  return pkg.format_ids.length === 0 || pkg.format_ids.some((f) => formatKey(f) === key);
}

export async function assign(tx: Queryable, accountId: string, creativeId: string, packageId: string, weight: number | undefined, now: Date): Promise<void> {
  await tx.query(sql`INSERT INTO sales_creative_assignments (account_id, creative_id, package_id, weight, created_at)
    VALUES (${accountId}::text, ${creativeId}::text, ${packageId}::text, ${weight ?? null}::numeric, ${now}::timestamptz)
    ON CONFLICT (account_id, creative_id, package_id) DO UPDATE SET weight = EXCLUDED.weight`);
}

/** `pending_creatives` becomes `pending_start` once every live package has a creative (revision bumped). */
export async function promoteIfReady(tx: Queryable, mediaBuyId: string, actor: string, now: Date): Promise<void> {
  const buy = await loadBuy(tx, mediaBuyId, null, true);
  if (buy?.status !== 'pending_creatives') return;
  const packages = (await loadPackages(tx, [mediaBuyId])).get(mediaBuyId)!;
  if (packages.some((p) => !p.canceled && p.format_ids.length > 0 && p.creatives === 0)) return;
  const next = { ...buy, status: requireTransition(buy.status, 'pending_start'), revision: buy.revision + 1, updated_at: now };
  await updateBuy(tx, mediaBuyId, { status: next.status, revision: next.revision, updated_at: now, due_at: dueAt(next, 0) });
  await addHistory(tx, {
    mediaBuyId,
    revision: next.revision,
    at: now,
    actor,
    action: 'creatives_ready',
    summary: 'Every package has creatives: waiting for the start time',
  });
}

const assignmentInput = v.strictObject({
  creative_id: v.pipe(v.string('is required'), v.regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must match ^[A-Za-z0-9_.:-]{1,128}$')),
  package_id: v.pipe(v.string('is required'), v.minLength(1), v.maxLength(128)),
  weight: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100))),
  placement_ids: v.optional(v.array(v.string())),
});

export function syncCreativesTask(deps: SalesDeps) {
  return defineTask({
    name: 'sync_creatives',
    description:
      'Upload creatives to the account library (format ids validated with the creative agent that defines them) and assign them to packages; a buy waiting for creatives moves to pending_start when every package has one.',
    protocol: 'media_buy',
    mutating: true,
    input: v.object({
      ...versionFields,
      account: accountRef,
      creatives: v.pipe(
        v.array(creative, 'must be an array of creatives'),
        v.minLength(1, 'must not be empty'),
        v.maxLength(100, 'accepts at most 100 creatives'),
      ),
      assignments: v.optional(v.pipe(v.array(assignmentInput), v.minLength(1, 'must not be empty'), v.maxLength(500))),
      creative_ids: v.optional(v.array(v.string())),
      delete_missing: v.optional(v.boolean()),
      dry_run: v.optional(v.boolean()),
      validation_mode: v.optional(v.picklist(['strict', 'lenient'], 'must be strict or lenient')),
    }),
    async handler({ input, principal, clock }) {
      if (input.delete_missing) throw new ProtocolError('UNSUPPORTED_FEATURE', 'delete_missing is not supported by this seller', { field: 'delete_missing' });
      const owner = principal.orgId;
      const account = await deps.accounts.resolve(deps.db, owner, input.account);
      const prepared = await prepareCreatives(deps, input.creatives, 'creatives');
      const byId = new Map(prepared.map((p) => [p.input.creative_id, p]));
      const assignments = input.assignments ?? [];
      // Packages named by assignments: the caller's, of this account, in a state that takes creatives.
      const packageIds = [...new Set(assignments.map((a) => a.package_id))];
      const rows = packageIds.length
        ? await deps.db.query<{ package_id: string; media_buy_id: string }>(sql`
            SELECT p.package_id, p.media_buy_id FROM sales_packages p JOIN sales_media_buys b USING (media_buy_id)
            WHERE p.package_id = ANY(${packageIds}::text[]) AND b.owner = ${owner}::text AND b.account_id = ${account.account_id}::text`)
        : [];
      const buyIds = [...new Set(rows.map((r) => r.media_buy_id))];
      const packages = new Map([...(await loadPackages(deps.db, buyIds)).values()].flat().map((p) => [p.package_id, p]));
      const library = new Map(
        (
          await deps.db.query<{ creative_id: string; format_key: string }>(sql`SELECT creative_id, format_key FROM sales_creatives
          WHERE account_id = ${account.account_id}::text AND creative_id = ANY(${assignments.map((a) => a.creative_id)}::text[])`)
        ).map((r) => [r.creative_id, r.format_key]),
      );
      for (const [i, a] of assignments.entries()) {
        const field = `assignments[${i}]`;
        const pkg = packages.get(a.package_id);
        if (!pkg)
          throw new ProtocolError('PACKAGE_NOT_FOUND', `No package ${a.package_id.slice(0, 128)} in this account's media buys`, {
            status: 404,
            field: `${field}.package_id`,
          });
        const key = byId.get(a.creative_id)?.key ?? library.get(a.creative_id);
        if (!key)
          throw new ProtocolError('CREATIVE_NOT_FOUND', `Creative ${a.creative_id} is neither in this request nor in the account library`, {
            status: 404,
            field: `${field}.creative_id`,
          });
        if (!fits(pkg, key)) {
          throw new ProtocolError('FORMAT_NOT_SUPPORTED', `Package ${pkg.package_id} does not accept the format of creative ${a.creative_id}`, {
            field: `${field}.creative_id`,
            suggestion: `Formats accepted: ${pkg.format_ids.map((f) => f.id).join(', ')}`,
          });
        }
      }
      for (const id of buyIds) {
        const buy = await loadBuy(deps.db, id, owner);
        if (buy) requireAction(buy.status, 'sync_creatives', 'assignments');
      }
      const now = clock.now();
      const actor = principal.orgName;
      const actions = input.dry_run
        ? new Map(prepared.map((p) => [p.input.creative_id, 'created' as const]))
        : await deps.db.transaction(async (tx) => {
            const acts = await writeCreatives(tx, owner, account.account_id, prepared, now);
            for (const a of assignments) await assign(tx, account.account_id, a.creative_id, a.package_id, a.weight, now);
            for (const id of buyIds) await promoteIfReady(tx, id, actor, now);
            return acts;
          });
      const results: Json[] = prepared.map((p) => {
        const out: Json = { creative_id: p.input.creative_id, action: actions.get(p.input.creative_id), status: 'approved' };
        const to = assignments.filter((a) => a.creative_id === p.input.creative_id).map((a) => a.package_id);
        if (assignments.length) out.assigned_to = to;
        return out;
      });
      const body: Json = { creatives: results };
      if (input.dry_run) body.dry_run = true;
      if (deps.options.sandbox || account.sandbox) body.sandbox = true;
      return body;
    },
  });
}

export function listCreativesTask(deps: SalesDeps) {
  return defineTask({
    name: 'list_creatives',
    description: "The caller's creative library: filter by ids, status, tags, name, media buys or packages; assignments on request; cursor pagination.",
    protocol: 'media_buy',
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
      if (input.account) where.push(sql`c.account_id = ${(await deps.accounts.resolve(deps.db, owner, input.account)).account_id}::text`);
      if (f.creative_ids) where.push(sql`c.creative_id = ANY(${f.creative_ids}::text[])`);
      if (f.statuses) where.push(sql`c.status = ANY(${f.statuses}::text[])`);
      if (f.tags) where.push(sql`c.tags @> ${f.tags}::text[]`);
      if (f.tags_any) where.push(sql`c.tags && ${f.tags_any}::text[]`);
      if (f.name_contains) where.push(sql`strpos(lower(c.name), ${f.name_contains.toLowerCase()}::text) > 0`);
      const assigned = sql`SELECT 1 FROM sales_creative_assignments a JOIN sales_packages p USING (package_id) WHERE a.account_id = c.account_id AND a.creative_id = c.creative_id`;
      if (f.media_buy_ids) where.push(sql`EXISTS (${assigned} AND p.media_buy_id = ANY(${f.media_buy_ids}::text[]))`);
      if (f.assigned_to_packages) where.push(sql`EXISTS (${assigned} AND p.package_id = ANY(${f.assigned_to_packages}::text[]))`);
      if (f.unassigned !== undefined) where.push(f.unassigned ? sql`NOT EXISTS (${assigned})` : sql`EXISTS (${assigned})`);
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
        assignments: Array<{ package_id: string; assigned_date: string }> | null;
        total: number;
      }>(sql`
        SELECT c.account_id, c.creative_id, c.name, c.format_id, c.status, c.tags, c.created_at, c.updated_at, count(*) OVER ()::int AS total,
          (SELECT jsonb_agg(jsonb_build_object('package_id', a.package_id, 'assigned_date', a.created_at) ORDER BY a.created_at, a.package_id)
             FROM sales_creative_assignments a WHERE a.account_id = c.account_id AND a.creative_id = c.creative_id) AS assignments
        FROM sales_creatives c WHERE ${sql.join(where, ' AND ')}
        ORDER BY c.created_at, c.account_id, c.creative_id LIMIT ${limit}::int OFFSET ${offset}::int`);
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
          const list = (r.assignments ?? []).map((a) => ({ package_id: a.package_id, assigned_date: new Date(a.assigned_date).toISOString() }));
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
