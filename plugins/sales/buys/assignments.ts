import { sql } from '../../../core/sql.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import type { FormatRef } from '../../../core/ports/inventory.ts';
import type { CreativePackages } from '../../../core/ports/seller-creatives.ts';
import { addHistory, loadBuy, loadPackages, updateBuy, type BuyRow, type PackageRow } from './store.ts';
import { requireAction, requireTransition } from './status.ts';
import { dueAt } from './due.ts';

/** Creative assignments are package state: this plugin owns them; the creative library (sales-creatives) sees them through `creativePackages`. */
export async function assign(tx: Queryable, accountId: string, creativeId: string, packageId: string, weight: number | undefined, now: Date): Promise<void> {
  await tx.query(sql`INSERT INTO sales_creative_assignments (account_id, creative_id, package_id, weight, created_at)
    VALUES (${accountId}::text, ${creativeId}::text, ${packageId}::text, ${weight ?? null}::numeric, ${now}::timestamptz)
    ON CONFLICT (account_id, creative_id, package_id) DO UPDATE SET weight = EXCLUDED.weight`);
}

/** Whether a buy is waiting for creatives that every live package now has (promoteIfReady moves it on). */
export const promotable = (buy: BuyRow, packages: readonly PackageRow[]) =>
  buy.status === 'pending_creatives' && !packages.some((p) => !p.canceled && p.format_ids.length > 0 && p.creatives === 0);

/**
 * `pending_creatives` becomes `pending_start` once every live package has a creative (revision
 * bumped): the promoted buy, else null. `known`: the buy (locked) and its packages as this
 * transaction wrote them, instead of reading them again.
 */
export async function promoteIfReady(
  tx: Queryable,
  mediaBuyId: string,
  actor: string,
  now: Date,
  known?: { buy: BuyRow; packages: PackageRow[] },
): Promise<BuyRow | null> {
  const buy = known ? known.buy : await loadBuy(tx, mediaBuyId, null, true);
  if (buy?.status !== 'pending_creatives') return null;
  const packages = known ? known.packages : (await loadPackages(tx, [mediaBuyId])).get(mediaBuyId)!;
  if (!promotable(buy, packages)) return null;
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
  return next;
}

/** The packages side of the SellerCreatives port (attached in init): sync_creatives assignments and list_creatives filters. */
export const creativePackages: CreativePackages = {
  async find(q, owner, accountId, packageIds) {
    if (!packageIds.length) return new Map();
    const rows = await q.query<{ package_id: string; media_buy_id: string; format_ids: FormatRef[] }>(sql`
      SELECT p.package_id, p.media_buy_id, p.format_ids FROM sales_packages p JOIN sales_media_buys b USING (media_buy_id)
      WHERE p.package_id = ANY(${[...packageIds]}::text[]) AND b.owner = ${owner}::text AND b.account_id = ${accountId}::text`);
    return new Map(rows.map((r) => [r.package_id, r]));
  },
  async checkAssignable(q, owner, mediaBuyIds) {
    for (const id of mediaBuyIds) {
      const buy = await loadBuy(q, id, owner);
      if (buy) requireAction(buy.status, 'sync_creatives', 'assignments');
    }
  },
  async assign(tx, accountId, assignments, actor, now) {
    for (const a of assignments) await assign(tx, accountId, a.creative_id, a.package_id, a.weight, now);
    const buys = await tx.query<{ media_buy_id: string }>(sql`SELECT DISTINCT media_buy_id FROM sales_packages
      WHERE package_id = ANY(${assignments.map((a) => a.package_id)}::text[]) ORDER BY media_buy_id`);
    for (const b of buys) await promoteIfReady(tx, b.media_buy_id, actor, now);
  },
  async assigned(q, owner, filter) {
    return q.query<{ account_id: string; creative_id: string }>(sql`
      SELECT DISTINCT a.account_id, a.creative_id FROM sales_creative_assignments a JOIN sales_packages p USING (package_id)
        JOIN sales_media_buys b ON b.media_buy_id = p.media_buy_id
      WHERE b.owner = ${owner}::text
        ${filter.mediaBuyIds ? sql`AND p.media_buy_id = ANY(${[...filter.mediaBuyIds]}::text[])` : sql.empty}
        ${filter.packageIds ? sql`AND p.package_id = ANY(${[...filter.packageIds]}::text[])` : sql.empty}`);
  },
  async assignmentsOf(q, accountId, creativeIds) {
    const out = new Map<string, Array<{ package_id: string; assigned_at: Date }>>();
    if (!creativeIds.length) return out;
    const rows = await q.query<{ creative_id: string; package_id: string; created_at: Date }>(sql`
      SELECT a.creative_id, a.package_id, a.created_at FROM unnest(${[...new Set(creativeIds)]}::text[]) AS k(id),
      LATERAL (SELECT creative_id, package_id, created_at FROM sales_creative_assignments
        WHERE account_id = ${accountId}::text AND creative_id = k.id OFFSET 0) a
      ORDER BY a.created_at, a.package_id`);
    for (const r of rows) {
      const list = out.get(r.creative_id) ?? [];
      list.push({ package_id: r.package_id, assigned_at: r.created_at });
      out.set(r.creative_id, list);
    }
    return out;
  },
};
