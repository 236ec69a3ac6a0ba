import { sql } from '../../../core/sql.ts';
import type { Json } from '../../../core/task.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import { ScenarioError } from '../../../core/ports/test-controller.ts';
import type { SalesDeps } from '../deps.ts';
import { accountSpend } from './spend.ts';
import { addMonths, DAY, isoDay, monthStart } from './calendar.ts';

/** Months back the job still issues (an agent down for a while catches up), and the invoices an answer lists. */
export const INVOICE_MONTHS = 12;
/** (account, month, currency) triples looked at per run; a full batch runs again at once. */
const BATCH = 50;
/** Days from issue to due date per payment terms (enums/payment-terms.json): prepay is due at issue. */
const TERMS_DAYS: Record<string, number> = { net_15: 15, net_30: 30, net_45: 45, net_60: 60, net_90: 90, prepay: 0 };
/** Terms of an account that agreed none: the seller's standard. */
const STANDARD_TERMS = 'net_30';

export type InvoiceStatus = 'issued' | 'paid' | 'void';

/** An invoice as stored, dates as YYYY-MM-DD. */
export interface InvoiceRow {
  invoice_id: string;
  owner: string;
  account_id: string;
  currency: string;
  period_start: string;
  period_end: string;
  amount: number;
  status: InvoiceStatus;
  due_date: string;
  paid_date: string | null;
}

const columns = sql`invoice_id, owner, account_id, currency, to_char(period_start, 'YYYY-MM-DD') AS period_start,
  to_char(period_end, 'YYYY-MM-DD') AS period_end, amount, status, to_char(due_date, 'YYYY-MM-DD') AS due_date,
  to_char(paid_date, 'YYYY-MM-DD') AS paid_date`;

const toInvoice = (r: any): InvoiceRow => ({ ...r, amount: Number(r.amount) });

/** The status a buyer sees: an issued invoice unpaid after its due date is past due. */
export const shownStatus = (r: InvoiceRow, today: string) => (r.status === 'issued' && today > r.due_date ? 'past_due' : r.status);

/** An invoice as get_account_financials lists it. */
export function renderInvoice(r: InvoiceRow, today: string): Json {
  const out: Json = {
    invoice_id: r.invoice_id,
    period: { start: r.period_start, end: r.period_end },
    amount: r.amount,
    status: shownStatus(r, today),
    due_date: r.due_date,
  };
  if (r.paid_date) out.paid_date = r.paid_date;
  return out;
}

/** The account's latest invoices in `currency`, newest period first (months that billed nothing left out). */
export async function recentInvoices(q: Queryable, accountId: string, currency: string, limit = INVOICE_MONTHS): Promise<InvoiceRow[]> {
  const rows = await q.query(sql`SELECT ${columns} FROM sales_invoices WHERE account_id = ${accountId}::text AND currency = ${currency}::text
    AND amount > 0 ORDER BY period_start DESC LIMIT ${limit}::int`);
  return rows.map(toInvoice);
}

/**
 * Serialize the account's billing writes (issuing, top-ups) until the transaction ends: a prepay
 * invoice is settled from what the earlier ones left of the top-ups, so two writers must not both count it.
 */
export async function lockAccountBilling(tx: Queryable, accountId: string): Promise<void> {
  await tx.query(sql`SELECT pg_advisory_xact_lock(hashtext(${`sales_invoices:${accountId}`}::text))`);
}

/**
 * Issue the invoices of closed months: for each account, month (UTC) and currency its confirmed buys
 * ran in, once the ad server's figures of the month are complete, the month's spend (accountSpend,
 * as get_account_financials sums it) due per the account's payment terms. The unique key (account,
 * currency, month) makes a second run or another instance a no-op. A prepay invoice that the
 * account's top-ups still cover is paid from them at issue. Returns whether a full batch was issued.
 */
export async function issueInvoices(deps: SalesDeps): Promise<boolean> {
  const now = deps.clock.now();
  const current = monthStart(now);
  const oldest = addMonths(current, -INVOICE_MONTHS);
  // Each buy's months (UTC) before this one, within the lookback, not invoiced yet in its currency.
  const due = await deps.db.query<{ owner: string; account_id: string; currency: string; month: string }>(sql`
    SELECT DISTINCT b.owner, b.account_id, b.currency, to_char(m.month, 'YYYY-MM-DD') AS month
    FROM sales_media_buys b
    CROSS JOIN LATERAL generate_series(
      date_trunc('month', greatest(b.start_time, ${oldest}::timestamptz) AT TIME ZONE 'UTC'),
      (least(b.end_time, ${current}::timestamptz) AT TIME ZONE 'UTC') - interval '1 microsecond',
      interval '1 month') AS m(month)
    WHERE b.confirmed_at IS NOT NULL AND b.status <> 'pending_review'
      AND b.start_time < ${current}::timestamptz AND b.end_time > ${oldest}::timestamptz
      AND NOT EXISTS (SELECT 1 FROM sales_invoices i
        WHERE i.account_id = b.account_id AND i.currency = b.currency AND i.period_start = m.month::date)
    ORDER BY month, b.account_id, b.currency LIMIT ${BATCH}::int`);
  if (!due.length) return false;
  const accounts = new Map((await deps.accounts.byIds(deps.db, [...new Set(due.map((d) => d.account_id))])).map((a) => [a.account_id, a]));
  let issued = 0;
  for (const d of due) {
    const from = new Date(`${d.month}T00:00:00Z`);
    const until = addMonths(from, 1);
    const spend = await accountSpend(deps, deps.db, { owner: d.owner, accountId: d.account_id, from, until, asOf: now, currency: d.currency });
    // The month's figures are still arriving: a later run invoices it.
    if (!spend.ready) continue;
    const terms = accounts.get(d.account_id)?.payment_terms ?? STANDARD_TERMS;
    const fresh = await deps.db.transaction(async (tx) => {
      await lockAccountBilling(tx, d.account_id);
      let status: InvoiceStatus = spend.total > 0 ? 'issued' : 'void';
      if (status === 'issued' && terms === 'prepay') {
        const [left] = await tx.query<{ remaining: string }>(sql`SELECT
          (SELECT COALESCE(sum(amount), 0) FROM sales_top_ups WHERE account_id = ${d.account_id}::text AND currency = ${d.currency}::text)
          - (SELECT COALESCE(sum(amount), 0) FROM sales_invoices WHERE account_id = ${d.account_id}::text AND currency = ${d.currency}::text
             AND status <> 'void') AS remaining`);
        if (Number(left!.remaining) >= spend.total) status = 'paid';
      }
      const rows = await tx.query(sql`
        INSERT INTO sales_invoices (invoice_id, owner, account_id, currency, period_start, period_end, amount, status, issued_at, due_date, paid_date, updated_at)
        VALUES (${`inv_${deps.ids.uuid7().replace(/-/g, '')}`}::text, ${d.owner}::text, ${d.account_id}::text, ${d.currency}::text, ${d.month}::date,
          ${isoDay(new Date(until.getTime() - DAY))}::date, ${spend.total}::numeric, ${status}::text, ${now}::timestamptz,
          ${isoDay(new Date(now.getTime() + TERMS_DAYS[terms]! * DAY))}::date, ${status === 'paid' ? isoDay(now) : null}::date, ${now}::timestamptz)
        ON CONFLICT (account_id, currency, period_start) DO NOTHING RETURNING invoice_id`);
      return rows.length > 0;
    });
    if (fresh) issued++;
  }
  return due.length === BATCH && issued > 0;
}

/**
 * Record that an issued invoice was paid (on `paidDate`) or voided: the operator's billing system
 * (`bun run sales record-payment`) or the test controller. `owner` limits it to one caller's
 * invoices (null: any). Paid and void are final; asking for the status it has changes nothing.
 * Throws ScenarioError NOT_FOUND or INVALID_TRANSITION (the CLI prints its message).
 */
export async function settleInvoice(
  tx: Queryable,
  o: { invoiceId: string; owner: string | null; target: 'paid' | 'void'; paidDate: string; now: Date },
  check?: (invoice: InvoiceRow) => Promise<void>,
): Promise<{ previous: string; current: string; invoice: InvoiceRow }> {
  const [row] = await tx.query(sql`SELECT ${columns} FROM sales_invoices WHERE invoice_id = ${o.invoiceId}::text AND amount > 0
    ${o.owner === null ? sql.empty : sql`AND owner = ${o.owner}::text`} FOR UPDATE`);
  if (!row) throw new ScenarioError('NOT_FOUND', `No invoice ${o.invoiceId}`, null);
  const invoice = toInvoice(row);
  await check?.(invoice);
  const previous = shownStatus(invoice, isoDay(o.now));
  if (invoice.status === o.target) return { previous, current: previous, invoice };
  if (invoice.status !== 'issued') throw new ScenarioError('INVALID_TRANSITION', `A ${invoice.status} invoice cannot become ${o.target}`, previous);
  await tx.query(sql`UPDATE sales_invoices SET status = ${o.target}::text, paid_date = ${o.target === 'paid' ? o.paidDate : null}::date,
    updated_at = ${o.now}::timestamptz WHERE invoice_id = ${o.invoiceId}::text`);
  return { previous, current: o.target, invoice };
}
