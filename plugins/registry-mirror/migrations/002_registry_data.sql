-- Registry data rebuilt from the followed feed, as far as event payloads carry it (NULL = no
-- event has carried that field yet). Each row remembers the last event applied to it, so a
-- replay after a re-bootstrap (410) never moves a row back to an older state.
CREATE TABLE mirror_publishers (
  publisher_id uuid PRIMARY KEY,
  domain text,
  source text,
  adagents_valid boolean,
  last_event_id uuid NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE mirror_properties (
  property_rid uuid PRIMARY KEY,
  publisher_domain text,
  property_type text,
  name text,
  identifiers jsonb,
  source text,
  -- active | stale | removed
  status text NOT NULL,
  last_event_id uuid NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX mirror_properties_publisher ON mirror_properties (publisher_domain);

CREATE TABLE mirror_agents (
  agent_id uuid PRIMARY KEY,
  agent_url text,
  -- false once agent.removed was seen
  listed boolean NOT NULL,
  last_event_id uuid NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Agent x property authorizations (entity id = the upstream's authorization id); revoked rows stay as tombstones.
CREATE TABLE mirror_authorizations (
  authorization_id uuid PRIMARY KEY,
  agent_id uuid,
  agent_url text,
  property_rid uuid,
  publisher_domain text,
  delegation_type text,
  authorized_for text,
  active boolean NOT NULL,
  last_event_id uuid NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX mirror_authorizations_agent ON mirror_authorizations (agent_url) WHERE active;
