-- sales_accounts moved to the sales-accounts plugin, sales_creatives and sales_format_cache to
-- sales-creatives (both run first); a database that ran this file when it still created them keeps
-- them (those plugins use IF NOT EXISTS).
CREATE TABLE sales_media_buys (
  media_buy_id text PRIMARY KEY,
  owner text NOT NULL,
  account_id text NOT NULL REFERENCES sales_accounts (account_id),
  brand_domain text NOT NULL,
  -- pending_review: booked, waiting for the ad server's approval (not listed to buyers yet)
  status text NOT NULL CHECK (status IN ('pending_review', 'pending_creatives', 'pending_start', 'active', 'paused', 'completed', 'canceled', 'rejected')),
  revision integer NOT NULL DEFAULT 1,
  currency text NOT NULL,
  total_budget numeric(16, 2) NOT NULL,
  start_time timestamptz NOT NULL,
  end_time timestamptz NOT NULL,
  asap boolean NOT NULL,
  sandbox boolean NOT NULL,
  po_number text,
  confirmed_at timestamptz,
  started_at timestamptz,
  ended_at timestamptz,
  rejection_reason text,
  canceled_by text,
  cancellation_reason text,
  -- Persistent channels (credentials sealed with the SecretBox port) and the create call's context.
  push_config jsonb,
  reporting_webhook jsonb,
  context jsonb,
  -- Reporting: start of the next window to report, last sequence number used, the window a
  -- `delayed` fire was already sent for, and the `final` fire (nothing fires after it).
  report_cursor timestamptz,
  report_seq integer NOT NULL DEFAULT 0,
  delayed_window timestamptz,
  final_sent_at timestamptz,
  -- Coalesced impairment fires owed at this time.
  impairments_due_at timestamptz,
  -- Next time the lifecycle job must look at this buy (transition, report or impairment fire).
  due_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX sales_media_buys_due ON sales_media_buys (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX sales_media_buys_owner ON sales_media_buys (owner, created_at, media_buy_id);

CREATE TABLE sales_packages (
  package_id text PRIMARY KEY,
  media_buy_id text NOT NULL REFERENCES sales_media_buys (media_buy_id) ON DELETE CASCADE,
  product_id text NOT NULL,
  pricing_option_id text NOT NULL,
  pricing_model text NOT NULL,
  rate numeric(16, 4) NOT NULL,
  currency text NOT NULL,
  budget numeric(16, 2) NOT NULL,
  bid_price numeric(16, 4),
  paused boolean NOT NULL DEFAULT false,
  canceled boolean NOT NULL DEFAULT false,
  -- formats the package accepts (the product's, or the subset the buyer asked for)
  format_ids jsonb NOT NULL,
  position integer NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX sales_packages_buy ON sales_packages (media_buy_id, position);

CREATE TABLE sales_buy_history (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  media_buy_id text NOT NULL REFERENCES sales_media_buys (media_buy_id) ON DELETE CASCADE,
  revision integer NOT NULL,
  at timestamptz NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  summary text,
  package_id text
);
CREATE INDEX sales_buy_history_buy ON sales_buy_history (media_buy_id, id);

-- The fires of reporting_webhook, by sequence number (which windows were reported, for `adjusted`).
CREATE TABLE sales_report_log (
  media_buy_id text NOT NULL REFERENCES sales_media_buys (media_buy_id) ON DELETE CASCADE,
  sequence_number integer NOT NULL,
  notification_type text NOT NULL,
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (media_buy_id, sequence_number)
);

CREATE TABLE sales_impairments (
  impairment_id text PRIMARY KEY,
  media_buy_id text NOT NULL REFERENCES sales_media_buys (media_buy_id) ON DELETE CASCADE,
  resource_type text NOT NULL,
  resource_id text NOT NULL,
  package_ids text[] NOT NULL,
  severity text NOT NULL,
  state text NOT NULL CHECK (state IN ('open', 'resolved')),
  transition_to text NOT NULL,
  reason_code text NOT NULL,
  reason text,
  remediation text,
  observed_at timestamptz NOT NULL,
  resolved_at timestamptz,
  -- a fire of the current state is owed (sent when the buy's coalescing window closes)
  fire_pending boolean NOT NULL DEFAULT true,
  fires integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX sales_impairments_open ON sales_impairments (media_buy_id, resource_type, resource_id) WHERE state = 'open';
CREATE INDEX sales_impairments_buy ON sales_impairments (media_buy_id, observed_at);

CREATE TABLE sales_creative_assignments (
  account_id text NOT NULL,
  creative_id text NOT NULL,
  package_id text NOT NULL REFERENCES sales_packages (package_id) ON DELETE CASCADE,
  weight numeric(6, 2),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, creative_id, package_id),
  FOREIGN KEY (account_id, creative_id) REFERENCES sales_creatives (account_id, creative_id) ON DELETE CASCADE
);
CREATE INDEX sales_creative_assignments_package ON sales_creative_assignments (package_id);
