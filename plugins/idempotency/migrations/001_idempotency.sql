-- One row per (principal, idempotency_key). The primary key is the claim: INSERT ... ON CONFLICT
-- lets exactly one concurrent request (on any instance) execute.
CREATE TABLE idempotency_keys (
  principal_id text NOT NULL,
  key text NOT NULL,
  task_name text NOT NULL,
  -- SHA-256 of the canonical JSON payload without idempotency_key
  payload_hash text NOT NULL,
  state text NOT NULL CHECK (state IN ('in_flight', 'completed')),
  -- fencing token of the executing request
  claim_id uuid NOT NULL,
  response jsonb,
  created_at timestamptz NOT NULL,
  -- an in-flight claim older than this is abandoned (its instance died) and may be taken over
  claimed_until timestamptz NOT NULL,
  -- end of the replay window (created_at + replay_ttl_seconds)
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (principal_id, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
