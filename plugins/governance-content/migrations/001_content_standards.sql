-- Accounts that own content standards, per caller organization: a natural key
-- {brand, operator, sandbox} names one account; account_id is what responses show.
CREATE TABLE content_standards_accounts (
  account_id text PRIMARY KEY,
  owner text NOT NULL,
  brand_domain text NOT NULL,
  operator text NOT NULL,
  sandbox boolean NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (owner, brand_domain, operator, sandbox)
);

-- Content standards configurations. `scope`, `policies`, `calibration_exemplars` hold the
-- validated request members; `version` counts updates (optimistic concurrency). account_id is
-- null for standards created without naming an account (the 3.x request schemas have no
-- `account`): they are the caller's, outside any account.
CREATE TABLE content_standards (
  standards_id text PRIMARY KEY,
  owner text NOT NULL,
  account_id text REFERENCES content_standards_accounts (account_id),
  name text,
  scope jsonb NOT NULL,
  registry_policy_ids jsonb,
  policies jsonb NOT NULL,
  calibration_exemplars jsonb,
  version integer NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX content_standards_owner ON content_standards (owner, account_id, standards_id);

-- Content artifacts delivered under a media buy (get_media_buy_artifacts). The sales plugins
-- keep no delivered-content record, so artifacts arrive through the artifact webhook
-- (POST /content-standards/artifacts) or the test controller (seed_media_buy_artifacts), kept per
-- owner and account (null: none named).
CREATE TABLE content_artifacts (
  owner text NOT NULL,
  account_id text REFERENCES content_standards_accounts (account_id),
  media_buy_id text NOT NULL,
  record_id text NOT NULL,
  package_id text,
  delivered_at timestamptz NOT NULL,
  country text,
  channel text,
  artifact jsonb NOT NULL,
  local_verdict text,
  PRIMARY KEY (owner, media_buy_id, record_id)
);
CREATE INDEX content_artifacts_buy ON content_artifacts (owner, media_buy_id, delivered_at, record_id);
