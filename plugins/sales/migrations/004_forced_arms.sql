-- Sandbox directives (comply_test_controller force_create_media_buy_arm): the next create_media_buy of
-- this caller under this account answers the named arm. One per caller and account; consumed by that call.
CREATE TABLE sales_forced_arms (
  owner text NOT NULL,
  account_id text NOT NULL REFERENCES sales_accounts (account_id),
  arm text NOT NULL CHECK (arm IN ('submitted')),
  task_id text NOT NULL,
  message text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (owner, account_id)
);
