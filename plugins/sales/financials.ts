import * as v from 'valibot';
import { sql } from '../../core/sql.ts';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { SalesDeps } from './deps.ts';
import { accountRef, date, versionFields } from '../../lib/adcp/request-fields.ts';
import { queryBuys } from './buys/store.ts';

const DAY = 86_400_000;
/** Buys summed per answer: an account with more is asked for a shorter period. */
const MAX_BUYS = 1000;

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/**
 * get_account_financials (account/get-account-financials-*.json): what an operator-billed account
 * spent in a period (default: the current calendar month, UTC, this seller's billing cycle), summed
 * from the ad server's delivery of its confirmed media buys, and how many of them served then. The
 * account's payment terms are echoed; this seller extends no credit and takes no prepayment, so
 * neither block is answered, and invoices are not issued here.
 */
export function getAccountFinancialsTask(deps: SalesDeps) {
  return defineTask({
    name: 'get_account_financials',
    description:
      "An operator-billed account's spend in a period (default: this calendar month, UTC) summed from its media buys' delivery, the number of buys that ran, and its payment terms and status.",
    protocol: 'media_buy',
    input: v.pipe(
      v.object({
        ...versionFields,
        account: accountRef,
        period: v.optional(v.object({ start: date, end: date })),
      }),
      v.forward(
        v.check((i) => !i.period || i.period.start <= i.period.end, 'must not be before period.start'),
        ['period', 'end'],
      ),
    ),
    async handler({ input, principal, clock }) {
      const owner = principal.orgId;
      const account = await deps.accounts.resolve(deps.db, owner, input.account);
      if (account.billing !== 'operator') {
        throw new ProtocolError(
          'INVALID_REQUEST',
          `account: ${account.account_id} is billed to ${account.billing}, not the operator: its financials are not this seller's to report`,
          {
            field: 'account',
          },
        );
      }
      const now = clock.now();
      const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
      const from = input.period ? new Date(`${input.period.start}T00:00:00Z`) : month;
      const until = input.period
        ? new Date(new Date(`${input.period.end}T00:00:00Z`).getTime() + DAY)
        : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
      // Buys whose flight overlaps the period: the only ones that can have spent in it.
      const buys = await queryBuys(
        deps.db,
        sql`owner = ${owner}::text AND account_id = ${account.account_id}::text AND confirmed_at IS NOT NULL AND status <> 'pending_review'
            AND start_time < ${until}::timestamptz AND end_time > ${from}::timestamptz`,
        sql`ORDER BY created_at, media_buy_id LIMIT ${MAX_BUYS + 1}::int`,
      );
      if (buys.length > MAX_BUYS) {
        throw new ProtocolError('INVALID_REQUEST', `period: more than ${MAX_BUYS} media buys ran in it; ask for a shorter period`, { field: 'period' });
      }
      const currencies = [...new Set(buys.map((b) => b.currency))];
      if (currencies.length > 1) {
        throw new ProtocolError(
          'INVALID_REQUEST',
          `account: its buys in this period are in several currencies (${currencies.join(', ')}); ask per period of one currency`,
          {
            field: 'period',
          },
        );
      }
      let spend = 0;
      let ran = 0;
      const end = new Date(Math.min(until.getTime(), now.getTime()));
      for (const b of buys) {
        if (end <= from) break;
        const [report] = await deps.adServer.report(deps.db, b.media_buy_id, [{ start: from, end }], now);
        const spent = report!.lines.reduce((s, l) => s + l.spend, 0);
        spend += spent;
        if (spent > 0) ran++;
      }
      const body: Json = {
        account: input.account as unknown as Json,
        currency: currencies[0] ?? 'USD',
        period: { start: isoDay(from), end: isoDay(new Date(until.getTime() - DAY)) },
        timezone: 'UTC',
        spend: { total_spend: Math.round(spend * 100) / 100, media_buy_count: ran },
        payment_status: account.status === 'active' ? 'current' : 'suspended',
      };
      if (account.payment_terms) body.payment_terms = account.payment_terms;
      return body;
    },
  });
}
