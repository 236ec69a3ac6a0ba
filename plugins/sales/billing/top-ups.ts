import { sql } from '../../../core/sql.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import type { IdsPort } from '../../../core/ports/ids.ts';
import { lockAccountBilling } from './invoices.ts';

export interface TopUps {
  /** Everything received in the currency. */
  total: number;
  /** The latest top-up (by the day it was received). */
  last?: { amount: number; date: string };
}

/** Prepaid funds of an account in one currency. */
export async function topUps(q: Queryable, accountId: string, currency: string): Promise<TopUps> {
  const [row] = await q.query<{ amount: string; date: string; total: string }>(sql`
    SELECT amount, to_char(received_on, 'YYYY-MM-DD') AS date, sum(amount) OVER () AS total
    FROM sales_top_ups WHERE account_id = ${accountId}::text AND currency = ${currency}::text
    ORDER BY received_on DESC, recorded_at DESC, top_up_id DESC LIMIT 1`);
  return row ? { total: Number(row.total), last: { amount: Number(row.amount), date: row.date } } : { total: 0 };
}

/**
 * Record prepaid funds the seller received for a prepay account, in the caller's transaction (its
 * billing system's id as `topUpId`, else one is minted; an id recorded already adds nothing), and
 * settle the unpaid invoices the top-ups now cover, oldest month first, as paid on the day received.
 */
export async function recordTopUp(
  tx: Queryable,
  ids: IdsPort,
  t: { topUpId?: string; owner: string; accountId: string; amount: number; currency: string; receivedOn: string; now: Date },
): Promise<{ topUpId: string; recorded: boolean; total: number }> {
  await lockAccountBilling(tx, t.accountId);
  const topUpId = t.topUpId ?? `top_${ids.uuid7().replace(/-/g, '')}`;
  const rows = await tx.query(sql`
    INSERT INTO sales_top_ups (top_up_id, owner, account_id, currency, amount, received_on, recorded_at)
    VALUES (${topUpId}::text, ${t.owner}::text, ${t.accountId}::text, ${t.currency}::text, ${t.amount}::numeric, ${t.receivedOn}::date, ${t.now}::timestamptz)
    ON CONFLICT (top_up_id) DO NOTHING RETURNING top_up_id`);
  const { total } = await topUps(tx, t.accountId, t.currency);
  // Invoices draw on the top-ups in month order: each one is covered when everything billed up to it is.
  await tx.query(sql`UPDATE sales_invoices SET status = 'paid', paid_date = ${t.receivedOn}::date, updated_at = ${t.now}::timestamptz
    WHERE invoice_id IN (SELECT invoice_id FROM (
      SELECT invoice_id, status, sum(amount) OVER (ORDER BY period_start) AS billed FROM sales_invoices
      WHERE account_id = ${t.accountId}::text AND currency = ${t.currency}::text AND status <> 'void') x
    WHERE status = 'issued' AND billed <= ${total}::numeric)`);
  return { topUpId, recorded: rows.length > 0, total };
}
