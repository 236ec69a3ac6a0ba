-- Serving tags the ad server handed out (build_creative of a library creative): one per creative,
-- placement (media buy, package) and format. `id` is derived from those, so instances agree on it.
CREATE TABLE creative_serving_tags (
  id text PRIMARY KEY,
  owner text NOT NULL,
  account_id text NOT NULL,
  creative_id text NOT NULL,
  media_buy_id text,
  package_id text,
  format_id jsonb NOT NULL,
  -- where a click is sent (the creative's http(s) clickthrough), NULL when it has none
  landing_url text,
  created_at timestamptz NOT NULL
);
CREATE INDEX creative_serving_tags_owner ON creative_serving_tags (owner, account_id, creative_id);

-- Tracker hits (impression pixel, click redirect), one row per hit: inserts only, so any instance records them.
CREATE TABLE creative_delivery_events (
  id bigserial PRIMARY KEY,
  tag_id text NOT NULL REFERENCES creative_serving_tags (id),
  kind text NOT NULL CHECK (kind IN ('impression', 'click')),
  occurred_at timestamptz NOT NULL
);
CREATE INDEX creative_delivery_events_tag ON creative_delivery_events (tag_id, occurred_at);

-- Usage a buyer reported (report_usage) for the agent's creatives, per record.
CREATE TABLE creative_usage_reports (
  id bigserial PRIMARY KEY,
  owner text NOT NULL,
  account_id text NOT NULL,
  creative_id text NOT NULL,
  media_buy_id text,
  pricing_option_id text,
  impressions bigint,
  vendor_cost numeric NOT NULL,
  currency text NOT NULL,
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX creative_usage_reports_owner ON creative_usage_reports (owner, account_id, creative_id);
