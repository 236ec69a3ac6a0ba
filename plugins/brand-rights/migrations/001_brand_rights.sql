-- Buyer accounts of the brand agent, per caller organization: a natural key {brand, operator,
-- sandbox} names one account (provisioned on first use). Whether it is governed is the seller's
-- sync_governance record for the same brand and operator (the SalesAccounts port).
CREATE TABLE brand_rights_accounts (
  account_id text PRIMARY KEY,
  owner text NOT NULL,
  brand_domain text NOT NULL,
  operator text NOT NULL,
  sandbox boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (owner, brand_domain, operator, sandbox)
);

-- Rights grants (acquire_rights), one per acquisition, owned by an account; `pending_approval` until the
-- rights holder approves (rights with approval_required), then `acquired`. `terms` is the
-- rights-terms.json object as granted; `revocation_webhook` the buyer's push-notification-config.
CREATE TABLE brand_rights_grants (
  grant_id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES brand_rights_accounts (account_id),
  owner text NOT NULL,
  rights_id text NOT NULL,
  brand_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending_approval', 'acquired', 'revoked')),
  paused boolean NOT NULL DEFAULT false,
  terms jsonb NOT NULL,
  countries jsonb,
  rights_key text NOT NULL,
  revocation_webhook jsonb NOT NULL,
  governance jsonb,
  revoked_reason text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX brand_rights_grants_account ON brand_rights_grants (account_id, created_at);

-- Creatives submitted for approval under a grant (creative_approval).
CREATE TABLE brand_rights_approvals (
  grant_id text NOT NULL REFERENCES brand_rights_grants (grant_id),
  creative_url text NOT NULL,
  creative_id text,
  status text NOT NULL CHECK (status IN ('approved', 'rejected', 'pending_review')),
  reason text,
  decided_at timestamptz NOT NULL,
  PRIMARY KEY (grant_id, creative_url)
);
