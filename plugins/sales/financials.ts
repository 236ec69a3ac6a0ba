import * as v from 'valibot';
import { ProtocolError } from '../../core/errors.ts';
import { defineTask, type Json } from '../../core/task.ts';
import type { SalesDeps } from './deps.ts';
import { accountRef, date, versionFields } from '../../lib/adcp/request-fields.ts';
import { accountSpend } from './billing/spend.ts';
import { accountStatement, lastCurrency } from './billing/statement.ts';
import { addMonths, DAY, isoDay, monthStart } from './billing/calendar.ts';

/** Buys summed per answer: an account with more is asked for a shorter period. */
const MAX_BUYS = 1000;

/**
 * get_account_financials (account/get-account-financials-*.json): what an operator-billed account
 * spent in a period (default: the current calendar month, UTC, this seller's billing cycle), summed
 * from the ad server's delivery of its confirmed media buys, and how many of them served then; its
 * recent monthly invoices, its credit (net_* terms) or prepaid balance (prepay), its payment terms
 * and payment status. All amounts are in the currency of the period's spend.
 */
export function getAccountFinancialsTask(deps: SalesDeps) {
  return defineTask({
    name: 'get_account_financials',
    description:
      "An operator-billed account's spend in a period (default: this calendar month, UTC) summed from its media buys' delivery, its recent monthly invoices, its credit or prepaid balance, and its payment terms and status.",
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
      // A suspended (or closed) account still reads its financials: found whatever its status; resolve
      // provisions a sandbox account on first reference, or refuses an unknown one.
      const account = (await deps.accounts.find(deps.db, owner, input.account)) ?? (await deps.accounts.resolve(deps.db, owner, input.account));
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
      const from = input.period ? new Date(`${input.period.start}T00:00:00Z`) : monthStart(now);
      const until = input.period ? new Date(new Date(`${input.period.end}T00:00:00Z`).getTime() + DAY) : addMonths(now, 1);
      const spend = await accountSpend(deps, deps.db, { owner, accountId: account.account_id, from, until, asOf: now, maxBuys: MAX_BUYS });
      if (spend.currencies.length > 1) {
        throw new ProtocolError(
          'INVALID_REQUEST',
          `account: its buys in this period are in several currencies (${spend.currencies.join(', ')}); ask per period of one currency`,
          {
            field: 'period',
          },
        );
      }
      const currency = spend.currencies[0] ?? (await lastCurrency(deps, account.account_id)) ?? account.credit_limit?.currency ?? 'USD';
      const statement = await accountStatement(deps, account, currency, now);
      const body: Json = {
        account: input.account as unknown as Json,
        currency,
        period: { start: isoDay(from), end: isoDay(new Date(until.getTime() - DAY)) },
        timezone: 'UTC',
        spend: { total_spend: spend.total, media_buy_count: spend.ran },
        payment_status: account.status === 'suspended' ? 'suspended' : statement.pastDue ? 'past_due' : 'current',
        invoices: statement.invoices,
      };
      if (account.payment_terms) body.payment_terms = account.payment_terms;
      if (statement.credit) body.credit = statement.credit;
      if (statement.balance) body.balance = statement.balance;
      return body;
    },
  });
}
