-- Health, compliance and verification of enrolled agents: one row of current state per agent
-- (also its probe schedule) and the history of every probe.
CREATE TABLE registry_agent_health (
  agent_id uuid PRIMARY KEY REFERENCES registry_agents (id) ON DELETE CASCADE,
  next_check_at timestamptz NOT NULL,
  last_checked_at timestamptz,
  -- healthy | degraded | unreachable | unknown
  status text NOT NULL DEFAULT 'unknown',
  latency_ms int,
  -- compliant | non_compliant | unknown
  compliance text NOT NULL DEFAULT 'unknown',
  compliance_issues jsonb NOT NULL DEFAULT '[]'::jsonb,
  compliance_changed_at timestamptz,
  verified boolean NOT NULL DEFAULT false,
  verified_since timestamptz,
  -- runs of consecutive passing / failing probes (the badge rules count them)
  passes int NOT NULL DEFAULT 0,
  failures int NOT NULL DEFAULT 0
);
CREATE INDEX registry_agent_health_due ON registry_agent_health (next_check_at);

CREATE TABLE registry_agent_health_checks (
  id uuid PRIMARY KEY,
  agent_id uuid NOT NULL REFERENCES registry_agents (id) ON DELETE CASCADE,
  checked_at timestamptz NOT NULL,
  protocol text,
  reachable boolean NOT NULL,
  capabilities_answered boolean NOT NULL,
  schema_conformant boolean,
  latency_ms int,
  issues jsonb NOT NULL DEFAULT '[]'::jsonb,
  error text
);
CREATE INDEX registry_agent_health_checks_agent ON registry_agent_health_checks (agent_id, checked_at DESC);
