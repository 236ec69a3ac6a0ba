#!/usr/bin/env bun
/**
 * The sales agent's operator commands, against its database (DATABASE_URL, or the PGlite data
 * directory): import a product catalog, and record what the seller's billing system knows about its
 * buyer accounts (credit limits, payments, prepaid top-ups) so get_account_financials shows it.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { assemble } from '../core/deployment.ts';
import { definePreset, ConfigError } from '../core/config.ts';
import { ProtocolError } from '../core/errors.ts';
import { Database } from '../core/ports/database.ts';
import { Clock } from '../core/ports/clock.ts';
import { Ids } from '../core/ports/ids.ts';
import { ScenarioError } from '../core/ports/test-controller.ts';
import { storage } from '../config/storage.ts';
import inventoryDb from '../plugins/inventory-db/index.ts';
import { importCatalog } from '../plugins/inventory-db/catalog.ts';
import { accountById, setCreditLimit } from '../plugins/sales-accounts/store.ts';
import { creditLimit } from '../plugins/sales-accounts/terms.ts';
import { recentInvoices, renderInvoice, settleInvoice } from '../plugins/sales/billing/invoices.ts';
import { recordTopUp } from '../plugins/sales/billing/top-ups.ts';
import { isoDay } from '../plugins/sales/billing/calendar.ts';
import { date } from '../lib/adcp/request-fields.ts';
import { exitOnHelp, parseArgsOrExit } from '../lib/cli.ts';

const usage = `usage: bun run sales <command> [arguments]   (DATABASE_URL, else the PGlite directory DATA_DIR)

  import <products.json>                              validate a product catalog (the format of plugins/inventory-db/seed.json)
                                                      and upsert it; products are matched by product_id
  set-credit-limit <account_id> <amount> <currency>   the account's credit limit ("default": the seller's default again)
  record-payment <invoice_id> [--date YYYY-MM-DD]     an issued invoice paid (default today)
  void-invoice <invoice_id>                           an issued invoice cancelled
  record-top-up <account_id> <amount> <currency> [--date YYYY-MM-DD] [--id <billing reference>]
                                                      prepaid funds received for a prepay account; an --id recorded
                                                      already adds nothing; it settles the unpaid invoices it covers
  invoices <account_id> [--currency XXX]              the account's recent invoices (default USD), one JSON line each

The billing commands need the sales agent's tables: run them against a database the agent has started on
(with PGlite, while the server is stopped).`;
exitOnHelp(usage);
const { positionals, values } = parseArgsOrExit(usage, () =>
  parseArgs({ allowPositionals: true, options: { date: { type: 'string' }, id: { type: 'string' }, currency: { type: 'string', default: 'USD' } } }),
);
const [command, ...args] = positionals;
const ARITY: Record<string, number[]> = {
  import: [1],
  'set-credit-limit': [2, 3],
  'record-payment': [1],
  'void-invoice': [1],
  'record-top-up': [3],
  invoices: [1],
};
if (!command || !ARITY[command]?.includes(args.length)) {
  console.error(usage);
  process.exit(2);
}

/** A valibot check of a command-line value; the error names the argument (or its field). */
function checked<T>(name: string, schema: v.GenericSchema<unknown, T>, value: unknown): T {
  const parsed = v.safeParse(schema, value);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  throw new ConfigError(`${v.getDotPath(issue) ?? name}: ${issue.message}`);
}

/** An amount of money as typed: digits, at most two decimals (anything else is NaN, refused as not a number). */
const amount = (text: string) => (/^\d+(\.\d{1,2})?$/.test(text) ? Number(text) : Number.NaN);
const day = (today: string) => {
  const d = checked('--date', date, values.date ?? today);
  if (d > today) throw new ConfigError('--date: must not be in the future');
  return d;
};

try {
  const deployment = await assemble(
    definePreset({ name: 'sales-cli', log: { level: 'warn' }, plugins: command === 'import' ? [storage, inventoryDb({ seed: false })] : [storage] }),
  );
  await deployment.start();
  const db = deployment.get(Database);
  const now = deployment.get(Clock).now();
  try {
    const [first, second, third] = args as [string, string, string];
    switch (command) {
      case 'import': {
        const counts = await importCatalog(db, JSON.parse(readFileSync(first, 'utf8')));
        console.log(`imported ${counts.products} products from ${first}`);
        break;
      }
      case 'set-credit-limit': {
        const limit = second === 'default' && !third ? null : checked('credit limit', creditLimit, { amount: amount(second), currency: third });
        if (!(await setCreditLimit(db, first, limit, now))) throw new ConfigError(`no account ${first}`);
        console.log(limit ? `${first}: credit limit ${limit.amount} ${limit.currency}` : `${first}: the seller's default credit limit`);
        break;
      }
      case 'record-payment':
      case 'void-invoice': {
        const target = command === 'record-payment' ? 'paid' : 'void';
        const paidDate = day(isoDay(now));
        const done = await db.transaction((tx) => settleInvoice(tx, { invoiceId: first, owner: null, target, paidDate, now }));
        console.log(`${first}: ${done.previous} -> ${done.current}`);
        break;
      }
      case 'record-top-up': {
        const value = checked('top-up', creditLimit, { amount: amount(second), currency: third });
        if (!(value.amount > 0)) throw new ConfigError('amount: must be positive');
        const receivedOn = day(isoDay(now));
        const account = await accountById(db, first);
        if (!account) throw new ConfigError(`no account ${first}`);
        if (account.payment_terms !== 'prepay') throw new ConfigError(`account ${first} is not on prepay terms (${account.payment_terms ?? 'none'})`);
        const done = await db.transaction((tx) =>
          recordTopUp(tx, deployment.get(Ids), { topUpId: values.id, owner: account.owner, accountId: first, ...value, receivedOn, now }),
        );
        console.log(
          done.recorded
            ? `${done.topUpId}: ${value.amount} ${value.currency} received ${receivedOn} (top-ups ${done.total})`
            : `${done.topUpId}: recorded already`,
        );
        break;
      }
      case 'invoices': {
        const currency = checked('--currency', creditLimit.entries.currency, values.currency);
        for (const invoice of await recentInvoices(db, first, currency)) console.log(JSON.stringify(renderInvoice(invoice, isoDay(now))));
        break;
      }
    }
  } finally {
    await deployment.stop();
  }
} catch (error) {
  if (error instanceof ProtocolError || error instanceof ConfigError || error instanceof SyntaxError || error instanceof ScenarioError) {
    console.error(`${command} failed: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
