import * as v from 'valibot';
import { defineScenario, ScenarioError, type TestScenario } from '../../../core/ports/test-controller.ts';
import { date } from '../../../lib/adcp/request-fields.ts';
import type { SalesAccount } from '../../../core/ports/sales-accounts.ts';
import type { SalesDeps } from '../deps.ts';
import { settleInvoice } from './invoices.ts';
import { recordTopUp } from './top-ups.ts';
import { isoDay } from './calendar.ts';

const id = v.pipe(v.string('is required'), v.minLength(1, 'must not be empty'), v.maxLength(128));

/**
 * Sandbox scenarios of billing (comply_test_controller), standing in for the seller's billing system:
 * an invoice paid or voided, prepaid funds received. Only the caller's sandbox accounts.
 */
export function billingScenarios(deps: SalesDeps): TestScenario[] {
  const sandboxOnly = (account: SalesAccount | undefined, state: string) => {
    if (!account?.sandbox && !deps.options.sandbox) throw new ScenarioError('FORBIDDEN', `Account ${account?.account_id} is not a sandbox account`, state);
  };
  return [
    defineScenario({
      name: 'force_invoice_status',
      protocol: 'media_buy',
      description: 'Mark an issued invoice of a sandbox account paid (on paid_date, default today) or void: params {invoice_id, status, paid_date?}',
      params: v.pipe(
        v.object({
          invoice_id: id,
          status: v.picklist(['paid', 'void'], 'must be paid or void'),
          paid_date: v.optional(date),
        }),
        v.forward(
          v.check((p) => p.status === 'paid' || p.paid_date === undefined, 'is only given with status paid'),
          ['paid_date'],
        ),
      ),
      async run({ params, principal }) {
        const now = deps.clock.now();
        if (params.paid_date && params.paid_date > isoDay(now)) throw new ScenarioError('INVALID_PARAMS', 'paid_date: must not be in the future');
        return deps.db.transaction(async (tx) => {
          const settled = await settleInvoice(
            tx,
            { invoiceId: params.invoice_id, owner: principal.orgId, target: params.status, paidDate: params.paid_date ?? isoDay(now), now },
            async (invoice) => sandboxOnly((await deps.accounts.byIds(tx, [invoice.account_id]))[0], invoice.status),
          );
          return { kind: 'transition', previous_state: settled.previous, current_state: settled.current };
        });
      },
    }),
    defineScenario({
      name: 'simulate_account_top_up',
      protocol: 'media_buy',
      description: 'Prepaid funds received for a sandbox prepay account (on date, default today): params {account_id, amount, currency, date?}',
      params: v.object({
        account_id: id,
        amount: v.pipe(v.number('must be a number'), v.gtValue(0, 'must be positive'), v.maxValue(1e12, 'must be at most 1e12')),
        currency: v.pipe(v.string('is required'), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code')),
        date: v.optional(date),
      }),
      async run({ params, principal }) {
        const now = deps.clock.now();
        if (params.date && params.date > isoDay(now)) throw new ScenarioError('INVALID_PARAMS', 'date: must not be in the future');
        const account = await deps.accounts.find(deps.db, principal.orgId, { account_id: params.account_id });
        if (!account) throw new ScenarioError('NOT_FOUND', `No account ${params.account_id} for this caller`, null);
        sandboxOnly(account, account.status);
        if (account.payment_terms !== 'prepay') {
          throw new ScenarioError('INVALID_STATE', `Account ${account.account_id} is not on prepay terms`, account.payment_terms ?? 'no payment terms');
        }
        const receivedOn = params.date ?? isoDay(now);
        const { topUpId, total } = await deps.db.transaction((tx) =>
          recordTopUp(tx, deps.ids, { owner: account.owner, accountId: account.account_id, amount: params.amount, currency: params.currency, receivedOn, now }),
        );
        return {
          kind: 'simulation',
          simulated: { top_up_id: topUpId, amount: params.amount, currency: params.currency, date: receivedOn },
          cumulative: { top_ups: total, currency: params.currency },
        };
      },
    }),
  ];
}
