import { sql } from '../../../core/sql.ts';
import { ProtocolError } from '../../../core/errors.ts';
import type { Queryable } from '../../../core/ports/database.ts';
import type { SalesDeps } from '../deps.ts';
import { queryBuys } from '../buys/store.ts';
import { cents } from '../money.ts';

export interface AccountSpend {
  /** Currencies of the buys that could have spent in the window (one when `currency` was given). */
  currencies: string[];
  /** In the buys' currency, to the cent. */
  total: number;
  /** Buys that spent something. */
  ran: number;
  /** Whether the ad server's figures of the window are complete (a closed month can be invoiced). */
  ready: boolean;
}

/**
 * What an account's confirmed media buys spent in [from, until) as the ad server reports it at
 * `asOf` (nothing later counts): the spend get_account_financials answers and the monthly invoices
 * bill. `currency` keeps the buys in it only; `maxBuys` refuses (INVALID_REQUEST on `period`) a
 * window in which more buys ran, so an answer stays bounded.
 */
export async function accountSpend(
  deps: Pick<SalesDeps, 'adServer'>,
  q: Queryable,
  o: { owner: string; accountId: string; from: Date; until: Date; asOf: Date; currency?: string; maxBuys?: number },
): Promise<AccountSpend> {
  // Buys whose flight overlaps the window: the only ones that can have spent in it.
  const buys = await queryBuys(
    q,
    sql`owner = ${o.owner}::text AND account_id = ${o.accountId}::text AND confirmed_at IS NOT NULL AND status <> 'pending_review'
        AND start_time < ${o.until}::timestamptz AND end_time > ${o.from}::timestamptz
        ${o.currency ? sql`AND currency = ${o.currency}::text` : sql.empty}`,
    sql`ORDER BY created_at, media_buy_id ${o.maxBuys ? sql`LIMIT ${o.maxBuys + 1}::int` : sql.empty}`,
  );
  if (o.maxBuys && buys.length > o.maxBuys) {
    throw new ProtocolError('INVALID_REQUEST', `period: more than ${o.maxBuys} media buys ran in it; ask for a shorter period`, { field: 'period' });
  }
  let total = 0;
  let ran = 0;
  let ready = true;
  const end = new Date(Math.min(o.until.getTime(), o.asOf.getTime()));
  if (end > o.from) {
    for (const b of buys) {
      const [report] = await deps.adServer.report(q, b.media_buy_id, [{ start: o.from, end }], o.asOf);
      const spent = report!.lines.reduce((s, l) => s + l.spend, 0);
      total += spent;
      if (spent > 0) ran++;
      ready &&= report!.ready;
    }
  }
  return { currencies: [...new Set(buys.map((b) => b.currency))], total: cents(total), ran, ready };
}
