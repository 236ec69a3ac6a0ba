import { sql } from '../../core/sql.ts';
import type { Queryable } from '../../core/ports/database.ts';
import type { AdServerEvent } from '../../core/ports/ad-server.ts';
import type { Json } from '../../core/task.ts';
import type { SalesDeps } from './deps.ts';
import { fire } from './channels.ts';
import { loadBuy, TERMINAL, updateBuy, type BuyRow } from './buys/store.ts';
import { dueAt } from './buys/due.ts';
import { sendAdjustments } from './reports.ts';

interface ImpairmentRow {
  impairment_id: string;
  media_buy_id: string;
  resource_type: string;
  resource_id: string;
  package_ids: string[];
  severity: string;
  state: 'open' | 'resolved';
  transition_to: string;
  reason_code: string;
  reason: string | null;
  remediation: string | null;
  observed_at: Date;
  resolved_at: Date | null;
}

/** core/impairment.json; a closing fire carries `resolved_at` under the same id. */
export function renderImpairment(r: ImpairmentRow): Json {
  const out: Json = {
    impairment_id: r.impairment_id,
    resource_type: r.resource_type,
    resource_id: r.resource_id,
    package_ids: r.package_ids,
    transition: { to: r.transition_to },
    reason_code: r.reason_code,
    observed_at: new Date(r.observed_at).toISOString(),
  };
  if (r.reason) out.reason = r.reason.slice(0, 500);
  if (r.remediation) out.remediation = r.remediation.slice(0, 500);
  if (r.resolved_at) out.resolved_at = new Date(r.resolved_at).toISOString();
  return out;
}

export async function openImpairments(q: Queryable, mediaBuyIds: readonly string[]): Promise<Map<string, Json[]>> {
  const out = new Map<string, Json[]>(mediaBuyIds.map((id) => [id, []]));
  if (!mediaBuyIds.length) return out;
  const rows = await q.query<ImpairmentRow>(sql`SELECT * FROM sales_impairments WHERE media_buy_id = ANY(${[...mediaBuyIds]}::text[]) AND state = 'open'
    ORDER BY media_buy_id, observed_at, impairment_id`);
  for (const r of rows) out.get(r.media_buy_id)!.push(renderImpairment(r));
  return out;
}

/**
 * Fire every impairment of the buy whose state changed since its last fire, one fire each, with
 * `notification_id` = impairment_id (re-emissions and the closing fire reuse it; each fire has a
 * new idempotency key). Nothing fires once the buy's life is over.
 */
export async function flushImpairments(tx: Queryable, deps: SalesDeps, b: BuyRow): Promise<number> {
  if (TERMINAL.has(b.status) || !b.push_config) {
    await tx.query(sql`UPDATE sales_impairments SET fire_pending = false WHERE media_buy_id = ${b.media_buy_id}::text AND fire_pending`);
    return 0;
  }
  const pending = await tx.query<ImpairmentRow>(sql`SELECT * FROM sales_impairments WHERE media_buy_id = ${b.media_buy_id}::text AND fire_pending
    ORDER BY observed_at, impairment_id FOR UPDATE`);
  if (!pending.length) return 0;
  const open = (await openImpairments(tx, [b.media_buy_id])).get(b.media_buy_id)!;
  for (const r of pending) {
    await fire(tx, deps, b, 'push', {
      message:
        r.state === 'open'
          ? `Delivery impaired: ${r.resource_type} ${r.resource_id} is ${r.transition_to}`
          : `Impairment resolved: ${r.resource_type} ${r.resource_id} is serviceable again`,
      notificationType: 'impairment',
      notificationId: r.impairment_id,
      result: {
        notification_type: 'impairment',
        media_buy_id: b.media_buy_id,
        health: open.length ? 'impaired' : 'ok',
        impairment: renderImpairment(r),
        impairments: open,
      },
    });
  }
  await tx.query(
    sql`UPDATE sales_impairments SET fire_pending = false, fires = fires + 1 WHERE impairment_id = ANY(${pending.map((r) => r.impairment_id)}::text[])`,
  );
  return pending.length;
}

/** Mark the buy's open impairments for another fire (its push channel changed: re-emission). */
export async function reemitOpen(tx: Queryable, mediaBuyId: string): Promise<boolean> {
  const rows = await tx.query(
    sql`UPDATE sales_impairments SET fire_pending = true WHERE media_buy_id = ${mediaBuyId}::text AND state = 'open' RETURNING impairment_id`,
  );
  return rows.length > 0;
}

/**
 * The ad server's events, in its transaction: impairments open or resolve per (buy, resource) and
 * are fired after the buy's coalescing window (fraud and brand safety at once); restatements
 * send `adjusted` reports for windows already reported.
 */
export function createEventHandler(deps: SalesDeps) {
  const delayMs = () => deps.adServer.reporting.expectedDelayMinutes * 60_000;
  return async (tx: Queryable, event: AdServerEvent): Promise<void> => {
    const buy = await loadBuy(tx, event.mediaBuyId, null, true);
    if (!buy || buy.status === 'pending_review' || TERMINAL.has(buy.status)) return;
    const now = deps.clock.now();
    if (event.type === 'delivery_adjusted') {
      const sent = await sendAdjustments(tx, deps, buy, event, now);
      if (sent) await updateBuy(tx, buy.media_buy_id, { report_seq: buy.report_seq + sent });
      return;
    }
    const [open] = await tx.query<ImpairmentRow>(sql`SELECT * FROM sales_impairments WHERE media_buy_id = ${buy.media_buy_id}::text
      AND resource_type = ${event.resourceType}::text AND resource_id = ${event.resourceId}::text AND state = 'open' FOR UPDATE`);
    if (event.state === 'open') {
      if (open) {
        const packages = [...new Set([...open.package_ids, ...event.packageIds])];
        await tx.query(sql`UPDATE sales_impairments SET package_ids = ${packages}::text[], transition_to = ${event.offlineState}::text, reason_code = ${event.reasonCode}::text,
          reason = ${event.reason ?? null}::text, remediation = ${event.remediation ?? null}::text, fire_pending = true, updated_at = ${now}::timestamptz
          WHERE impairment_id = ${open.impairment_id}::text`);
      } else {
        await tx.query(sql`INSERT INTO sales_impairments (impairment_id, media_buy_id, resource_type, resource_id, package_ids, severity, state, transition_to,
            reason_code, reason, remediation, observed_at, updated_at)
          VALUES (${`imp_${deps.ids.uuid7().replace(/-/g, '')}`}::text, ${buy.media_buy_id}::text, ${event.resourceType}::text, ${event.resourceId}::text,
            ${event.packageIds}::text[], ${event.severity}::text, 'open', ${event.offlineState}::text, ${event.reasonCode}::text, ${event.reason ?? null}::text,
            ${event.remediation ?? null}::text, ${event.observedAt}::timestamptz, ${now}::timestamptz)`);
      }
    } else {
      if (!open) return;
      await tx.query(sql`UPDATE sales_impairments SET state = 'resolved', resolved_at = ${event.observedAt}::timestamptz, fire_pending = true, updated_at = ${now}::timestamptz
        WHERE impairment_id = ${open.impairment_id}::text`);
    }
    if (event.severity !== 'general') {
      // Fraud and brand safety are latency-sensitive: no coalescence.
      await flushImpairments(tx, deps, buy);
      return;
    }
    const window = new Date(now.getTime() + deps.options.impairmentCoalesceSeconds * 1000);
    const due = buy.impairments_due_at && buy.impairments_due_at < window ? buy.impairments_due_at : window;
    await updateBuy(tx, buy.media_buy_id, { impairments_due_at: due, due_at: dueAt({ ...buy, impairments_due_at: due }, delayMs()) });
  };
}
