-- Moved from the `sales` plugin's 001 (same definitions): IF NOT EXISTS, so a database that ran the
-- old `sales` migrations keeps its tables and rows. Accounts belong to sales-accounts, which runs first.

-- The buyer's creative library, per account.
CREATE TABLE IF NOT EXISTS sales_creatives (
  account_id text NOT NULL REFERENCES sales_accounts (account_id),
  creative_id text NOT NULL,
  owner text NOT NULL,
  name text NOT NULL,
  format_id jsonb NOT NULL,
  format_key text NOT NULL,
  assets jsonb NOT NULL,
  tags text[] NOT NULL DEFAULT '{}',
  status text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, creative_id)
);
CREATE INDEX IF NOT EXISTS sales_creatives_owner ON sales_creatives (owner, created_at, account_id, creative_id);

-- What creative agents said about format ids (list_creative_formats), shared by instances.
CREATE TABLE IF NOT EXISTS sales_format_cache (
  agent_url text NOT NULL,
  format_id text NOT NULL,
  known boolean NOT NULL,
  name text,
  fetched_at timestamptz NOT NULL,
  PRIMARY KEY (agent_url, format_id)
);
