import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { sql } from '../../core/sql.ts';
import { Database } from '../../core/ports/database.ts';
import testController from '../../plugins/test-controller/index.ts';
import { DATABASE_URL, forEachDatabase } from '../support/db.ts';
import { bothVersionsErrors } from '../support/schemas.ts';
import type { TaskClient } from '../support/agent.ts';
import { HOUR, MIN, OTHER_TOKEN, startSalesWorld, type SalesWorld } from './fixture.ts';

let n = 0;
const key = (p: string) => `${p}-financials-${String(++n).padStart(8, '0')}`;
const DAY = 24 * HOUR;
const FINANCIALS = 'account/get-account-financials-response.json';
const CONTROLLER = 'compliance/comply-test-controller-response.json';
/** The seller's schema per adapter (the CLI opens it in its own process). */
const sellerSchemas = new Map<string, string>();

/** A call of a test scenario; its answer valid in both versions. */
async function control(c: TaskClient, scenario: string, params: Record<string, unknown>) {
  const r = await c.call('comply_test_controller', { scenario, params, account: { sandbox: true } });
  expect(bothVersionsErrors(CONTROLLER, r.body)).toEqual([]);
  return r.body;
}

/** get_account_financials of an account, valid in both versions. */
async function financials(c: TaskClient, accountId: string, extra: Record<string, unknown> = {}) {
  const r = await c.call('get_account_financials', { account: { account_id: accountId }, ...extra });
  expect(bothVersionsErrors(FINANCIALS, r.body)).toEqual([]);
  expect(r.ok).toBe(true);
  return r.body;
}

/** What the account's buys delivered between two dates (inclusive), as get_media_buy_delivery reports it. */
async function delivered(c: TaskClient, accountId: string, start: string, end: string): Promise<number> {
  const r = await c.call('get_media_buy_delivery', { account: { account_id: accountId }, start_date: start, end_date: end });
  return r.body.aggregated_totals.spend as number;
}

/** Move the clock to `iso`, running every due job on the way (the invoicing job included). */
async function until(w: SalesWorld, iso: string) {
  await w.advance(new Date(iso).getTime() - w.clock.now().getTime());
}

/** A buy of `budget` under the account, live from now until 10 April. */
async function liveBuy(w: SalesWorld, c: TaskClient, accountId: string, budget: number) {
  const bought = await c.call('create_media_buy', {
    idempotency_key: key('buy'),
    account: { account_id: accountId },
    start_time: 'asap',
    end_time: '2026-04-10T00:00:00.000Z',
    packages: [{ product_id: 'gaming_rewarded_video', pricing_option_id: 'gaming_rewarded_cpm', budget }],
  });
  expect(bought.ok).toBe(true);
  await control(c, 'force_media_buy_status', { media_buy_id: bought.body.media_buy_id, status: 'active' });
}

/**
 * get_account_financials: an operator-billed account's spend, summed from its buys' delivery, per
 * period; its monthly invoices (issued by the `sales.invoices` job once a month's delivery is
 * complete), its credit or prepaid balance, and its payment status.
 */
forEachDatabase<SalesWorld>(
  'account financials',
  (adapter, schema) => {
    sellerSchemas.set(adapter, `${schema}_s`);
    return startSalesWorld(adapter, schema, {
      env: { PROTOCOL_NAMESPACE: 'adcp' },
      sales: { sandbox: true, invoiceIntervalMs: 60_000 },
      extra: [testController({ enabled: true })],
    });
  },
  (w) => w.close(),
  (get, adapter) => {
    const accounts: Record<string, string> = {};

    test('spend of the period from delivery, buys that ran, payment terms; valid in both versions; other callers and bad periods refused', async () => {
      const w = get();
      const c = await w.client('mcp');
      const synced = await c.call('sync_accounts', {
        idempotency_key: key('acc'),
        accounts: [
          { brand: { domain: 'fin.example' }, operator: 'agency.example', billing: 'operator', payment_terms: 'net_30' },
          { brand: { domain: 'fin-advertiser.example' }, operator: 'agency.example', billing: 'advertiser' },
        ],
      });
      const [accountId, advertiserBilled] = synced.body.accounts.map((a: { account_id: string }) => a.account_id);
      const account = { account_id: accountId };
      const empty = await financials(c, accountId);
      expect(empty).toMatchObject({
        account,
        currency: 'USD',
        timezone: 'UTC',
        spend: { total_spend: 0, media_buy_count: 0 },
        payment_terms: 'net_30',
        payment_status: 'current',
        invoices: [],
        // net_30 and no limit of its own: the seller's default.
        credit: { credit_limit: 50_000, available_credit: 50_000, utilization_percent: 0 },
      });
      expect(empty.period).toEqual({ start: '2026-03-01', end: '2026-03-31' });

      const bought = await c.call('create_media_buy', {
        idempotency_key: key('buy'),
        account,
        start_time: 'asap',
        end_time: new Date(w.clock.now().getTime() + 10 * DAY).toISOString(),
        packages: [{ product_id: 'gaming_rewarded_video', pricing_option_id: 'gaming_rewarded_cpm', budget: 5000 }],
      });
      expect(bought.ok).toBe(true);
      await control(c, 'force_media_buy_status', { media_buy_id: bought.body.media_buy_id, status: 'active' });
      await w.advance(72 * HOUR);
      const delivery = await c.call('get_media_buy_delivery', { media_buy_ids: [bought.body.media_buy_id], start_date: '2026-03-01', end_date: '2026-03-31' });
      const spent = delivery.body.media_buy_deliveries[0].totals.spend as number;
      expect(spent).toBeGreaterThan(0);
      const fin = await financials(c, accountId, { period: { start: '2026-03-01', end: '2026-03-31' }, context: { trace: 'fin' } });
      expect(fin.spend.media_buy_count).toBe(1);
      expect(fin.spend.total_spend).toBeCloseTo(spent, 2);
      expect(fin.context).toEqual({ trace: 'fin' });
      // This month's spend is owed on credit until it is invoiced and paid.
      expect(fin.credit.available_credit).toBeCloseTo(50_000 - spent, 2);
      expect(fin.credit.utilization_percent).toBeCloseTo((spent / 50_000) * 100, 2);
      // A period before the buy: nothing spent.
      const before = await financials(c, accountId, { period: { start: '2026-01-01', end: '2026-01-31' } });
      expect(before.spend).toEqual({ total_spend: 0, media_buy_count: 0 });

      const reversed = await c.call('get_account_financials', { account, period: { start: '2026-03-31', end: '2026-03-01' } });
      expect(reversed.ok).toBe(false);
      expect(JSON.stringify(reversed.body)).toContain('period.end');
      const malformed = await c.call('get_account_financials', { account, period: { start: 'March', end: '2026-03-01' } });
      expect(malformed.ok).toBe(false);
      const notOperator = await c.call('get_account_financials', { account: { account_id: advertiserBilled } });
      expect(notOperator.ok).toBe(false);
      expect(JSON.stringify(notOperator.body)).toContain('not the operator');
      const other = await w.client('mcp', OTHER_TOKEN);
      const foreign = await other.call('get_account_financials', { account });
      expect(JSON.stringify(foreign.body)).toContain('ACCOUNT_NOT_FOUND');
      await other.close();
      await c.close();
    });

    test('a month closes: one invoice per account, on two instances and run after run, of the delivered spend, due per terms; past due, paid, credit and balance', async () => {
      const w = get();
      const c = await w.client('mcp');
      const synced = await c.call('sync_accounts', {
        idempotency_key: key('acc'),
        accounts: [
          { brand: { domain: 'credit.example' }, operator: 'agency.example', billing: 'operator', payment_terms: 'net_30' },
          { brand: { domain: 'prepaid.example' }, operator: 'agency.example', billing: 'operator', payment_terms: 'prepay' },
          { brand: { domain: 'funded.example' }, operator: 'agency.example', billing: 'operator', payment_terms: 'prepay' },
        ],
      });
      const [credit, prepaid, funded] = synced.body.accounts.map((a: { account_id: string }) => a.account_id) as [string, string, string];
      Object.assign(accounts, { credit, prepaid });
      // A seller-set credit limit of its own (core/account.json credit_limit), shown in list_accounts.
      await control(c, 'seed_account', {
        account_id: 'acc_fin_limited',
        fixture: { brand: { domain: 'limited.example' }, operator: 'agency.example', payment_terms: 'net_15', credit_limit: { amount: 1000, currency: 'USD' } },
      });
      const limited = 'acc_fin_limited';
      const listed = await c.call('list_accounts', { account: { account_id: limited } });
      expect(bothVersionsErrors('account/list-accounts-response.json', listed.body)).toEqual([]);
      expect(listed.body.accounts[0]).toMatchObject({ payment_terms: 'net_15', credit_limit: { amount: 1000, currency: 'USD' } });

      await control(c, 'simulate_account_top_up', { account_id: prepaid, amount: 500, currency: 'USD' });
      const topped = await control(c, 'simulate_account_top_up', { account_id: funded, amount: 100_000, currency: 'USD' });
      expect(topped).toMatchObject({ success: true, simulated: { amount: 100_000, currency: 'USD', date: '2026-03-05' }, cumulative: { top_ups: 100_000 } });
      for (const [account, budget] of [
        [credit, 5000],
        [prepaid, 3000],
        [funded, 1000],
        [limited, 5000],
      ] as const)
        await liveBuy(w, c, account, budget);
      await w.addInstance();
      const db = w.seller.deployment.get(Database);
      const invoiceRows = () =>
        db.query<{ invoice_id: string; account_id: string; period_start: string }>(
          sql`SELECT invoice_id, account_id, to_char(period_start, 'YYYY-MM-DD') AS period_start FROM sales_invoices ORDER BY account_id, period_start`,
        );

      // March closes; its delivery is complete ten minutes later (the ad server's reporting delay): nothing is invoiced before.
      await until(w, '2026-04-01T00:05:00Z');
      expect(await invoiceRows()).toEqual([]);
      await w.advance(10 * MIN);
      const issued = await invoiceRows();
      await w.advance(HOUR);
      expect(await invoiceRows()).toEqual(issued);
      // Exactly one per account and month, though both instances' jobs ran together, and ran again.
      const march = issued.filter((r) => r.period_start === '2026-03-01');
      expect(new Set(march.map((r) => r.account_id)).size).toBe(march.length);
      for (const a of [credit, prepaid, funded, limited]) expect(march.filter((r) => r.account_id === a)).toHaveLength(1);

      const spentIn = async (a: string) => ({
        march: await delivered(c, a, '2026-03-01', '2026-03-31'),
        april: await delivered(c, a, '2026-04-01', '2026-04-30'),
      });
      const creditSpend = await spentIn(credit);
      const creditFin = await financials(c, credit);
      expect(creditFin.period).toEqual({ start: '2026-04-01', end: '2026-04-30' });
      expect(creditFin.invoices).toHaveLength(1);
      expect(creditFin.invoices[0]).toMatchObject({ period: { start: '2026-03-01', end: '2026-03-31' }, status: 'issued', due_date: '2026-05-01' });
      expect(creditFin.invoices[0].amount).toBeCloseTo(creditSpend.march, 2);
      expect(creditFin.invoices[0].paid_date).toBeUndefined();
      const outstanding = creditFin.invoices[0].amount + creditSpend.april;
      expect(creditFin.credit.credit_limit).toBe(50_000);
      expect(creditFin.credit.available_credit).toBeCloseTo(50_000 - outstanding, 2);
      expect(creditFin.credit.utilization_percent).toBeCloseTo((outstanding / 50_000) * 100, 2);
      expect(creditFin.payment_status).toBe('current');

      // net_15 on its own limit, spent past it: no credit left (utilization at most 100).
      const limitedFin = await financials(c, limited);
      expect(limitedFin.invoices[0]).toMatchObject({ status: 'issued', due_date: '2026-04-16' });
      const limitedOwed = limitedFin.invoices[0].amount + (await spentIn(limited)).april;
      expect(limitedOwed).toBeGreaterThan(1000);
      expect(limitedFin.credit).toEqual({ credit_limit: 1000, available_credit: expect.closeTo(1000 - limitedOwed, 2), utilization_percent: 100 });

      // Prepay: due at issue. The top-ups covered the funded account's month, paid from them at issue; not the other's.
      const fundedSpend = await spentIn(funded);
      const fundedFin = await financials(c, funded);
      expect(fundedFin.invoices[0]).toMatchObject({ status: 'paid', due_date: '2026-04-01', paid_date: '2026-04-01' });
      expect(fundedFin.balance.available).toBeCloseTo(100_000 - fundedSpend.march - fundedSpend.april, 2);
      expect(fundedFin.balance.last_top_up).toEqual({ amount: 100_000, date: '2026-03-05' });
      expect(fundedFin.credit).toBeUndefined();
      const prepaidSpend = await spentIn(prepaid);
      expect(prepaidSpend.march).toBeGreaterThan(500);
      let prepaidFin = await financials(c, prepaid);
      expect(prepaidFin.invoices[0]).toMatchObject({ status: 'issued', due_date: '2026-04-01' });
      expect(prepaidFin).toMatchObject({ payment_status: 'current', balance: { available: 0, last_top_up: { amount: 500, date: '2026-03-05' } } });

      // The next day it is past due, until a top-up covers it.
      await w.advance(DAY);
      prepaidFin = await financials(c, prepaid);
      expect(prepaidFin.invoices[0].status).toBe('past_due');
      expect(prepaidFin.payment_status).toBe('past_due');
      expect(await control(c, 'simulate_account_top_up', { account_id: prepaid, amount: 5000, currency: 'USD' })).toMatchObject({
        cumulative: { top_ups: 5500 },
      });
      prepaidFin = await financials(c, prepaid);
      expect(prepaidFin.invoices[0]).toMatchObject({ status: 'paid', paid_date: '2026-04-02' });
      expect(prepaidFin.payment_status).toBe('current');
      const prepaidApril = await delivered(c, prepaid, '2026-04-01', '2026-04-30');
      expect(prepaidFin.balance.available).toBeCloseTo(5500 - prepaidFin.invoices[0].amount - prepaidApril, 2);
      expect(prepaidFin.balance.last_top_up).toEqual({ amount: 5000, date: '2026-04-02' });

      // April closes (the buys ended on the 10th): its invoices follow; March's net_30 one is past due on 2 May.
      await until(w, '2026-05-01T00:15:00Z');
      await w.advance(DAY);
      let late = await financials(c, credit);
      expect(late.invoices.map((i: any) => [i.period.start, i.status, i.due_date])).toEqual([
        ['2026-04-01', 'issued', '2026-05-31'],
        ['2026-03-01', 'past_due', '2026-05-01'],
      ]);
      expect(late.invoices[0].amount).toBeCloseTo(await delivered(c, credit, '2026-04-01', '2026-04-30'), 2);
      expect(late.payment_status).toBe('past_due');
      // Nothing spent since April: what is owed is the two invoices.
      const owed = late.invoices[0].amount + late.invoices[1].amount;
      expect(late.credit.available_credit).toBeCloseTo(50_000 - owed, 2);
      expect(late.spend).toEqual({ total_spend: 0, media_buy_count: 0 });

      const paid = await control(c, 'force_invoice_status', { invoice_id: late.invoices[1].invoice_id, status: 'paid', paid_date: '2026-05-02' });
      expect(paid).toMatchObject({ success: true, previous_state: 'past_due', current_state: 'paid' });
      late = await financials(c, credit);
      expect(late.invoices[1]).toMatchObject({ status: 'paid', paid_date: '2026-05-02' });
      expect(late.payment_status).toBe('current');
      expect(late.credit.available_credit).toBeCloseTo(50_000 - late.invoices[0].amount, 2);
      // Paying again changes nothing.
      expect(await control(c, 'force_invoice_status', { invoice_id: late.invoices[1].invoice_id, status: 'paid' })).toMatchObject({
        success: true,
        previous_state: 'paid',
        current_state: 'paid',
      });
      await c.close();
    }, 60_000);

    test('billing scenarios: other callers refused, bad params, final statuses; a suspended account reads its financials', async () => {
      const w = get();
      const c = await w.client('mcp');
      const { credit, prepaid } = accounts as { credit: string; prepaid: string };
      const [april] = (await financials(c, credit)).invoices;
      const other = await w.client('mcp', OTHER_TOKEN);
      expect(await control(other, 'force_invoice_status', { invoice_id: april.invoice_id, status: 'paid' })).toMatchObject({
        success: false,
        error: 'NOT_FOUND',
      });
      expect(await control(other, 'simulate_account_top_up', { account_id: prepaid, amount: 10, currency: 'USD' })).toMatchObject({
        success: false,
        error: 'NOT_FOUND',
      });
      expect(JSON.stringify((await other.call('get_account_financials', { account: { account_id: credit } })).body)).toContain('ACCOUNT_NOT_FOUND');
      await other.close();

      for (const params of [
        { invoice_id: april.invoice_id, status: 'overdue' },
        { invoice_id: april.invoice_id, status: 'void', paid_date: '2026-05-02' },
        { invoice_id: april.invoice_id, status: 'paid', paid_date: '2026-06-01' },
        { status: 'paid' },
      ])
        expect(await control(c, 'force_invoice_status', params)).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
      expect(await control(c, 'force_invoice_status', { invoice_id: 'inv_nope', status: 'paid' })).toMatchObject({ success: false, error: 'NOT_FOUND' });
      for (const params of [
        { account_id: prepaid, amount: -5, currency: 'USD' },
        { account_id: prepaid, amount: 5, currency: 'usd' },
        { account_id: prepaid, amount: 5, currency: 'USD', date: '2026-05-03' },
      ])
        expect(await control(c, 'simulate_account_top_up', params)).toMatchObject({ success: false, error: 'INVALID_PARAMS' });
      expect(await control(c, 'simulate_account_top_up', { account_id: credit, amount: 5, currency: 'USD' })).toMatchObject({
        success: false,
        error: 'INVALID_STATE',
      });

      // Void is final, and a void invoice is owed no more.
      expect(await control(c, 'force_invoice_status', { invoice_id: april.invoice_id, status: 'void' })).toMatchObject({
        success: true,
        previous_state: 'issued',
        current_state: 'void',
      });
      expect(await control(c, 'force_invoice_status', { invoice_id: april.invoice_id, status: 'paid' })).toMatchObject({
        success: false,
        error: 'INVALID_TRANSITION',
        current_state: 'void',
      });
      const voided = await financials(c, credit);
      expect(voided.invoices[0]).toMatchObject({ invoice_id: april.invoice_id, status: 'void' });
      expect(voided.credit).toMatchObject({ available_credit: 50_000, utilization_percent: 0 });

      await control(c, 'force_account_status', { account_id: credit, status: 'suspended' });
      expect((await financials(c, credit)).payment_status).toBe('suspended');
      await control(c, 'force_account_status', { account_id: credit, status: 'active' });
      await c.close();
    });

    // The CLI runs in its own process against a database it opens itself: Postgres only (a PGlite in memory cannot be shared).
    if (adapter === 'postgres' && DATABASE_URL) {
      test('bun run sales: credit limits, payments and top-ups from the billing system', async () => {
        const w = get();
        const c = await w.client('mcp');
        const { credit, prepaid } = accounts as { credit: string; prepaid: string };
        const run = async (...args: string[]) => {
          const child = Bun.spawn(['bun', join(import.meta.dir, '../../scripts/sales.ts'), ...args], {
            env: { ...process.env, DATABASE_URL: DATABASE_URL!, DATABASE_SCHEMA: sellerSchemas.get('postgres')!, LOG_LEVEL: 'silent' },
            stdout: 'pipe',
            stderr: 'pipe',
          });
          const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
          return { out, err, code };
        };
        expect(await run('set-credit-limit', credit, '2000', 'USD')).toMatchObject({ code: 0, out: `${credit}: credit limit 2000 USD\n` });
        expect((await financials(c, credit)).credit.credit_limit).toBe(2000);
        expect((await run('set-credit-limit', credit, 'default')).code).toBe(0);
        expect((await financials(c, credit)).credit.credit_limit).toBe(50_000);
        const badAmount = await run('set-credit-limit', credit, '12.345', 'USD');
        expect(badAmount.code).toBe(1);
        expect(badAmount.err).toContain('amount');
        expect((await run('set-credit-limit', 'acc_nope', '10', 'USD')).err).toContain('no account acc_nope');

        const limitedMarch = (await financials(c, 'acc_fin_limited')).invoices.find((i: any) => i.period.start === '2026-03-01');
        expect((await run('record-payment', limitedMarch.invoice_id, '--date', '2026-05-02')).code).toBe(0);
        expect((await financials(c, 'acc_fin_limited')).invoices.find((i: any) => i.invoice_id === limitedMarch.invoice_id)).toMatchObject({
          status: 'paid',
          paid_date: '2026-05-02',
        });
        expect((await run('void-invoice', limitedMarch.invoice_id)).err).toContain('A paid invoice cannot become void');

        const first = await run('record-top-up', prepaid, '250.50', 'USD', '--date', '2026-05-02', '--id', 'bank-0001');
        expect(first).toMatchObject({ code: 0, out: 'bank-0001: 250.5 USD received 2026-05-02 (top-ups 5750.5)\n' });
        expect((await run('record-top-up', prepaid, '250.50', 'USD', '--date', '2026-05-02', '--id', 'bank-0001')).out).toBe('bank-0001: recorded already\n');
        expect((await financials(c, prepaid)).balance.last_top_up).toEqual({ amount: 250.5, date: '2026-05-02' });
        const notPrepay = await run('record-top-up', credit, '10', 'USD');
        expect(notPrepay.code).toBe(1);
        expect(notPrepay.err).toContain('not on prepay terms');

        const listed = (await run('invoices', credit)).out
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        expect(listed.map((i) => i.period.start)).toEqual(['2026-04-01', '2026-03-01']);
        await c.close();
      });
    }
  },
);
