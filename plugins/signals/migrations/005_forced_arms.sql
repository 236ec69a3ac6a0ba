-- Sandbox directives (comply_test_controller force_get_signals_arm): the caller's next get_signals answers
-- submitted with the named task_id. One per caller; consumed by that call.
CREATE TABLE signals_forced_arms (
  principal_id text PRIMARY KEY,
  task_id text NOT NULL,
  message text,
  created_at timestamptz NOT NULL
);
