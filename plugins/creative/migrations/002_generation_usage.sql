-- Tokens a copy model spent per generated creative, for usage reporting. `scope` is the build's task id
-- (asynchronous builds) or its principal and idempotency key.
CREATE TABLE creative_generation_usage (
  id bigserial PRIMARY KEY,
  scope text NOT NULL,
  format_id text NOT NULL,
  model text NOT NULL,
  input_tokens integer NOT NULL CHECK (input_tokens >= 0),
  output_tokens integer NOT NULL CHECK (output_tokens >= 0),
  created_at timestamptz NOT NULL
);
CREATE INDEX creative_generation_usage_scope ON creative_generation_usage (scope);
