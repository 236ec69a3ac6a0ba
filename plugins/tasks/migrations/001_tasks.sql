-- Durable records of asynchronous task calls (a terminal initial response creates none).
CREATE TABLE tasks (
  id uuid PRIMARY KEY,
  task_type text NOT NULL,
  protocol text NOT NULL,
  principal_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('submitted', 'working', 'input-required', 'completed', 'failed', 'canceled', 'rejected')),
  message text,
  progress jsonb,
  result jsonb,
  context jsonb,
  context_id text NOT NULL,
  push_notification_config jsonb,
  a2a_push_config jsonb,
  -- continuation state handed to the task definition's resume step
  state jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- when the worker should resume it; NULL once nothing is left to run
  run_at timestamptz,
  -- a worker holding the step; another instance may take over after it passes
  lease_until timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  -- number of status changes recorded so far (history sequence)
  sequence integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  completed_at timestamptz
);
CREATE INDEX tasks_due ON tasks (run_at) WHERE run_at IS NOT NULL;
CREATE INDEX tasks_principal ON tasks (principal_id, created_at DESC);

-- Every status change, written in the same transaction as the change (and the notifier's outbox rows).
CREATE TABLE task_status_history (
  task_id uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
  sequence integer NOT NULL,
  status text NOT NULL,
  previous_status text,
  message text,
  result jsonb,
  at timestamptz NOT NULL,
  PRIMARY KEY (task_id, sequence)
);
