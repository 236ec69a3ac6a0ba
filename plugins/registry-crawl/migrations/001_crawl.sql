-- Durable crawl jobs, shared by every worker of every instance. Claimed with
-- FOR UPDATE SKIP LOCKED; a running job carries a lease, and a job whose lease ran out
-- (its worker died) is claimed again until max_attempts.
CREATE TABLE crawl_jobs (
  id uuid PRIMARY KEY,
  domain text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
  -- request | schedule | cli
  reason text NOT NULL,
  requested_by text,
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL,
  run_after timestamptz NOT NULL,
  lease_until timestamptz,
  worker text,
  result jsonb,
  last_error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  finished_at timestamptz
);
-- At most one open job per domain: a second request joins the open one.
CREATE UNIQUE INDEX crawl_jobs_open_domain ON crawl_jobs (domain) WHERE status IN ('queued', 'running');
CREATE INDEX crawl_jobs_ready ON crawl_jobs (run_after) WHERE status = 'queued';
CREATE INDEX crawl_jobs_leases ON crawl_jobs (lease_until) WHERE status = 'running';

-- Every domain ever crawled, with when it is due again (the scheduled re-crawl on a TTL).
CREATE TABLE crawl_targets (
  domain text PRIMARY KEY,
  next_crawl_at timestamptz NOT NULL,
  last_crawled_at timestamptz,
  last_outcome text
);
CREATE INDEX crawl_targets_due ON crawl_targets (next_crawl_at);
