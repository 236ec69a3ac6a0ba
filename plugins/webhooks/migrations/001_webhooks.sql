-- Sender side: the outbox. One row per webhook to deliver; written in the transaction of the
-- status change that causes it, delivered at least once by the workers.
CREATE TABLE webhook_outbox (
  id uuid PRIMARY KEY,
  idempotency_key text NOT NULL,
  url text NOT NULL,
  auth_mode text NOT NULL CHECK (auth_mode IN ('rfc9421', 'hmac', 'bearer')),
  credentials text,
  format text NOT NULL CHECK (format IN ('mcp', 'a2a')),
  task_id text,
  operation_id text,
  -- The exact bytes sent on every attempt (re-signed per attempt, never re-serialized).
  body text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivering', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  lease_until timestamptz,
  lease_owner text,
  give_up_at timestamptz NOT NULL,
  last_error text,
  created_at timestamptz NOT NULL,
  delivered_at timestamptz
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_outbox_leased ON webhook_outbox (lease_until) WHERE status = 'delivering';
CREATE INDEX webhook_outbox_task ON webhook_outbox (task_id);

CREATE TABLE webhook_delivery_attempts (
  outbox_id uuid NOT NULL REFERENCES webhook_outbox (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  status text NOT NULL CHECK (status IN ('success', 'failed', 'timeout', 'connection_error', 'pending')),
  http_status_code integer,
  error_message text,
  started_at timestamptz NOT NULL,
  finished_at timestamptz,
  PRIMARY KEY (outbox_id, attempt)
);

-- Receiver side: RFC 9421 replay cache on (keyid, nonce).
CREATE TABLE webhook_replay_nonces (
  keyid text NOT NULL,
  nonce text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (keyid, nonce)
);
CREATE INDEX webhook_replay_nonces_live ON webhook_replay_nonces (keyid, expires_at);

-- Receiver side: sender keys known to be revoked, and when the list was last refreshed.
CREATE TABLE webhook_key_revocations (
  keyid text PRIMARY KEY,
  revoked_at timestamptz NOT NULL
);
CREATE TABLE webhook_revocation_refresh (
  id integer PRIMARY KEY CHECK (id = 1),
  refreshed_at timestamptz NOT NULL
);

-- Receiver side: sender JWKS documents (brand.json -> jwks_uri), shared by instances.
CREATE TABLE webhook_jwks_cache (
  source text PRIMARY KEY,
  jwks jsonb NOT NULL,
  fetched_at timestamptz NOT NULL
);

-- Receiver side: dedup on (sender identity, idempotency_key), kept >= 24 h.
CREATE TABLE webhook_received (
  sender text NOT NULL,
  idempotency_key text NOT NULL,
  format text NOT NULL,
  task_id text,
  notification_id text,
  received_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (sender, idempotency_key)
);
CREATE INDEX webhook_received_expiry ON webhook_received (sender, expires_at);
CREATE INDEX webhook_received_notification ON webhook_received (sender, notification_id) WHERE notification_id IS NOT NULL;
