-- Who governs an account's spend (sync_governance): one governance agent per account, with the
-- credential this seller presents to it (sealed by the SecretBox when the deployment has a key).
CREATE TABLE account_governance_agents (
  account_id text PRIMARY KEY REFERENCES sales_accounts (account_id),
  url text NOT NULL,
  scheme text NOT NULL,
  credentials text NOT NULL,
  categories jsonb,
  updated_at timestamptz NOT NULL
);
