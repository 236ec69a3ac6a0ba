-- A second job kind on the same durable queue: refreshing an enrolled agent's capability
-- catalogs (get_{ns}_capabilities). For these jobs `domain` holds the agent URL.
ALTER TABLE crawl_jobs ADD COLUMN kind text NOT NULL DEFAULT 'publisher' CHECK (kind IN ('publisher', 'agent_capabilities'));
DROP INDEX crawl_jobs_open_domain;
-- At most one open job per target and kind.
CREATE UNIQUE INDEX crawl_jobs_open_target ON crawl_jobs (kind, domain) WHERE status IN ('queued', 'running');

-- When each enrolled agent's capabilities are checked next, and how the last check went
-- (failures are recorded here; the stored capabilities are kept until a check succeeds).
CREATE TABLE crawl_agent_targets (
  agent_url text PRIMARY KEY,
  next_check_at timestamptz NOT NULL,
  last_checked_at timestamptz,
  -- unchanged | updated | error (the agent answered, but not with usable capabilities) | failed (attempts exhausted)
  last_outcome text,
  last_error text,
  consecutive_failures integer NOT NULL DEFAULT 0
);
CREATE INDEX crawl_agent_targets_due ON crawl_agent_targets (next_check_at);
