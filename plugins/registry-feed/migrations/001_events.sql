-- Writers append here inside the transaction that makes the change. Rows stay invisible until
-- that transaction commits; the sequencer then moves them to registry_events.
CREATE TABLE registry_event_staging (
  seq bigserial PRIMARY KEY,
  event_type text NOT NULL,
  entity_type text NOT NULL,
  entity_id uuid NOT NULL,
  payload jsonb NOT NULL,
  actor text NOT NULL,
  created_at timestamptz NOT NULL
);

-- The feed. event_id is assigned by the sequencer, under an advisory lock, strictly above every
-- id already here, so ids grow in the order rows become visible and a reader's cursor never
-- passes an event that commits later.
CREATE TABLE registry_events (
  event_id uuid PRIMARY KEY,
  event_type text NOT NULL,
  entity_type text NOT NULL,
  entity_id uuid NOT NULL,
  payload jsonb NOT NULL,
  actor text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX registry_events_created_at ON registry_events (created_at);
CREATE INDEX registry_events_type ON registry_events (event_type, event_id);
