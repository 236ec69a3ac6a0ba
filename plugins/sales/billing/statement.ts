import { sql } from '../../../core/sql.ts';
import type { Json } from '../../../core/task.ts';
import type { SalesAccount } from '../../../core/ports/sales-accounts.ts';
import type { SalesDeps } from '../deps.ts';
import { accountSpend } from './spend.ts';
import { recentInvoices, renderInvoice } from './invoices.ts';
import { topUps } from './top-ups.ts';
import { addMonths, isoDay, monthStart } from './calendar.ts';
import { cents } from '../money.ts';

export interface Statement {
  /** Recent invoices in the currency (get-account-financials-response invoices[]). */
  invoices: Json[];
  /** Whether any invoice of the account (any currency) is unpaid after its due date. */
  pastDue: boolean;
  /** net_* terms: the credit block; absent when the account's own limit is in another currency. */
  credit?: Json;
  /** prepay terms: the balance block. */
  balance?: Json;
}

/** The currency the account was last billed or topped up in, if any: what an answer without spend is in. */
export async function lastCurrency(deps: Pick<SalesDeps, 'db'>, accountId: string): Promise<string | undefined> {
  const [row] = await deps.db.query<{ currency: string }>(sql`SELECT currency FROM (
      SELECT currency, issued_at AS at FROM sales_invoices WHERE account_id = ${accountId}::text AND amount > 0
      UNION ALL SELECT currency, recorded_at FROM sales_top_ups WHERE account_id = ${accountId}::text) x
    ORDER BY at DESC LIMIT 1`);
  return row?.currency;
}

/**
 * An account's standing in `currency` at `now`: recent invoices, whether it is past due, and per its
 * terms its credit (limit: the account's, else the seller's default; outstanding: unpaid invoices plus
 * spend not invoiced yet) or its prepaid balance (top-ups less invoiced and not yet invoiced spend).
 */
export async function accountStatement(deps: SalesDeps, account: SalesAccount, currency: string, now: Date): Promise<Statement> {
  const today = isoDay(now);
  const current = monthStart(now);
  const previous = addMonths(current, -1);
  const [sums] = await deps.db.query<{ unpaid: string; invoiced: string; previous_billed: boolean; past_due: boolean }>(sql`SELECT
      COALESCE(sum(amount) FILTER (WHERE status = 'issued' AND currency = ${currency}::text), 0) AS unpaid,
      COALESCE(sum(amount) FILTER (WHERE status <> 'void' AND currency = ${currency}::text), 0) AS invoiced,
      COALESCE(bool_or(currency = ${currency}::text AND period_start = ${isoDay(previous)}::date), false) AS previous_billed,
      COALESCE(bool_or(status = 'issued' AND due_date < ${today}::date), false) AS past_due
    FROM sales_invoices WHERE account_id = ${account.account_id}::text`);
  const statement: Statement = {
    invoices: (await recentInvoices(deps.db, account.account_id, currency)).map((r) => renderInvoice(r, today)),
    pastDue: sums!.past_due,
  };
  const terms = account.payment_terms;
  if (!terms) return statement;
  const limit = account.credit_limit ? (account.credit_limit.currency === currency ? account.credit_limit.amount : undefined) : deps.options.defaultCreditLimit;
  if (terms !== 'prepay' && limit === undefined) return statement;
  // Spend not invoiced yet: this month's, and last month's until its invoice is issued.
  const uninvoiced = (
    await accountSpend(deps, deps.db, {
      owner: account.owner,
      accountId: account.account_id,
      from: sums!.previous_billed ? current : previous,
      until: addMonths(current, 1),
      asOf: now,
      currency,
    })
  ).total;
  if (terms === 'prepay') {
    const funds = await topUps(deps.db, account.account_id, currency);
    // An overdrawn balance shows as nothing left (the schema's minimum); what is owed is on the invoices.
    statement.balance = { available: Math.max(0, cents(funds.total - Number(sums!.invoiced) - uninvoiced)) };
    if (funds.last) statement.balance.last_top_up = funds.last;
  } else {
    const outstanding = cents(Number(sums!.unpaid) + uninvoiced);
    statement.credit = {
      credit_limit: limit!,
      available_credit: cents(limit! - outstanding),
      utilization_percent: limit! > 0 ? Math.min(100, cents((outstanding / limit!) * 100)) : outstanding > 0 ? 100 : 0,
    };
  }
  return statement;
}
