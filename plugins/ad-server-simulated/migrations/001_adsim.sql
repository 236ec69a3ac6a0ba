-- Orders booked on the simulated ad server.
CREATE TABLE adsim_orders (
  media_buy_id text PRIMARY KEY,
  owner text NOT NULL,
  start_time timestamptz NOT NULL,
  end_time timestamptz NOT NULL,
  decision text NOT NULL CHECK (decision IN ('approved', 'pending_review', 'rejected')),
  review_at timestamptz,
  reason text,
  booked_at timestamptz NOT NULL,
  -- the model generated its events (adjustments, impairments) for every hour before this
  events_through timestamptz NOT NULL
);

CREATE TABLE adsim_lines (
  media_buy_id text NOT NULL REFERENCES adsim_orders (media_buy_id) ON DELETE CASCADE,
  package_id text NOT NULL,
  product_id text NOT NULL,
  budget numeric(16, 2) NOT NULL,
  pricing_model text NOT NULL,
  rate numeric(16, 4) NOT NULL,
  currency text NOT NULL,
  ctr numeric(6, 5) NOT NULL,
  PRIMARY KEY (media_buy_id, package_id)
);

-- Serving timeline of each line: delivery happens between a `live` row and the next other one.
CREATE TABLE adsim_line_states (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  media_buy_id text NOT NULL,
  package_id text NOT NULL,
  state text NOT NULL CHECK (state IN ('live', 'paused', 'ended')),
  at timestamptz NOT NULL,
  FOREIGN KEY (media_buy_id, package_id) REFERENCES adsim_lines (media_buy_id, package_id) ON DELETE CASCADE
);
CREATE INDEX adsim_line_states_line ON adsim_line_states (media_buy_id, package_id, at, id);

-- Events for subscribers, due at a time; dispatched once (FOR UPDATE SKIP LOCKED claims).
CREATE TABLE adsim_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  media_buy_id text NOT NULL,
  payload jsonb NOT NULL,
  due_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  dispatched_at timestamptz
);
CREATE INDEX adsim_events_due ON adsim_events (due_at, id) WHERE dispatched_at IS NULL;
