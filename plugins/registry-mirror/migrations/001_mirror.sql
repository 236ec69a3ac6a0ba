-- Where this mirror stands in each upstream feed it follows.
CREATE TABLE mirror_state (
  source text PRIMARY KEY,
  cursor uuid,
  events_received bigint NOT NULL DEFAULT 0,
  events_applied bigint NOT NULL DEFAULT 0,
  bootstraps integer NOT NULL DEFAULT 0,
  last_bootstrap_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Latest known state of every entity the feed mentions (its last event and payload).
CREATE TABLE mirror_entities (
  entity_type text NOT NULL,
  entity_id uuid NOT NULL,
  last_event_id uuid NOT NULL,
  last_event_type text NOT NULL,
  payload jsonb NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (entity_type, entity_id)
);

-- Listing snapshots taken when the feed cursor expired (410) and the copy is rebuilt.
CREATE TABLE mirror_snapshots (
  source text NOT NULL,
  listing text NOT NULL,
  document jsonb,
  status integer NOT NULL,
  taken_at timestamptz NOT NULL,
  PRIMARY KEY (source, listing)
);
