-- sales_audiences, sales_audience_members, sales_event_sources, sales_events, sales_catalogs and
-- sales_catalog_items moved to the sales-buyer-data plugin; a database that ran this file when it
-- still created them keeps them (sales-buyer-data uses IF NOT EXISTS).

-- The governance decision a buy was created under (plan, check, conditions), when a governance agent was consulted.
ALTER TABLE sales_media_buys ADD COLUMN governance jsonb;

-- provide_performance_feedback, per buy (and package or creative when named).
CREATE TABLE sales_performance_feedback (
  feedback_id text PRIMARY KEY,
  media_buy_id text NOT NULL REFERENCES sales_media_buys (media_buy_id) ON DELETE CASCADE,
  package_id text,
  creative_id text,
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL,
  performance_index numeric(12, 4) NOT NULL,
  metric_type text NOT NULL,
  feedback_source text NOT NULL,
  status text NOT NULL,
  submitted_at timestamptz NOT NULL
);
CREATE INDEX sales_performance_feedback_buy ON sales_performance_feedback (media_buy_id, submitted_at, feedback_id);
