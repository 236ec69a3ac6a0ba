-- Moved from the `sales` plugin's 001 (same definition): IF NOT EXISTS, so a database that ran the
-- old `sales` migrations keeps its table and its rows.
-- Buyer accounts: one per (owner, brand, operator, sandbox); `owner` is the calling organization.
CREATE TABLE IF NOT EXISTS sales_accounts (
  account_id text PRIMARY KEY,
  owner text NOT NULL,
  brand_domain text NOT NULL,
  operator text NOT NULL,
  billing text NOT NULL CHECK (billing IN ('operator', 'agent', 'advertiser')),
  payment_terms text,
  sandbox boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'active',
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (owner, brand_domain, operator, sandbox)
);
CREATE INDEX IF NOT EXISTS sales_accounts_owner ON sales_accounts (owner, created_at, account_id);
