-- Accounts that own property and collection lists, per caller organization: a natural key
-- {brand, operator, sandbox} names one account; account_id is what responses show.
CREATE TABLE governance_list_accounts (
  account_id text PRIMARY KEY,
  owner text NOT NULL,
  brand_domain text NOT NULL,
  operator text NOT NULL,
  sandbox boolean NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (owner, brand_domain, operator, sandbox)
);

-- Property lists (kind 'property') and collection lists (kind 'collection'). `sources` and
-- `filters` hold the validated request members; `token_hash` is the SHA-256 of the auth_token
-- handed out once at creation; `resolved_digest` fingerprints the last resolution (webhooks fire
-- when it changes).
CREATE TABLE governance_lists (
  list_id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('property', 'collection')),
  owner text NOT NULL,
  account_id text NOT NULL REFERENCES governance_list_accounts (account_id),
  name text NOT NULL,
  description text,
  sources jsonb,
  filters jsonb,
  brand jsonb,
  webhook_url text,
  token_hash text NOT NULL,
  resolved_count integer NOT NULL,
  resolved_digest text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX governance_lists_owner ON governance_lists (owner, kind, list_id);
