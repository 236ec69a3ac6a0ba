-- Monthly invoices (UTC calendar months): one per account, month and currency, issued by the
-- `sales.invoices` job once the month's delivery is complete; the unique key makes issuing idempotent
-- across runs and instances. `past_due` is not stored: an `issued` invoice whose due_date has passed.
-- A month whose buys spent nothing is kept at amount 0 as `void` (so it is not computed again) and not shown.
CREATE TABLE sales_invoices (
  invoice_id text PRIMARY KEY,
  owner text NOT NULL,
  account_id text NOT NULL REFERENCES sales_accounts (account_id),
  currency text NOT NULL,
  period_start date NOT NULL,
  period_end date NOT NULL,
  amount numeric(16, 2) NOT NULL CHECK (amount >= 0),
  status text NOT NULL CHECK (status IN ('issued', 'paid', 'void')),
  issued_at timestamptz NOT NULL,
  due_date date NOT NULL,
  paid_date date,
  updated_at timestamptz NOT NULL,
  UNIQUE (account_id, currency, period_start)
);

-- Prepaid funds the seller received for an account (recorded from its billing system).
CREATE TABLE sales_top_ups (
  top_up_id text PRIMARY KEY,
  owner text NOT NULL,
  account_id text NOT NULL REFERENCES sales_accounts (account_id),
  currency text NOT NULL,
  amount numeric(16, 2) NOT NULL CHECK (amount > 0),
  received_on date NOT NULL,
  recorded_at timestamptz NOT NULL
);
CREATE INDEX sales_top_ups_account ON sales_top_ups (account_id, currency, received_on);
