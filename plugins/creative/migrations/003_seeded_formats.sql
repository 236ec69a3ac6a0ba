-- Formats a sandbox caller seeded (comply_test_controller seed_creative_format) for one account: while
-- any exist, list_creative_formats under that account lists exactly these, in seeding order.
CREATE TABLE creative_seeded_formats (
  scope text NOT NULL,
  id text NOT NULL CHECK (id ~ '^[a-zA-Z0-9_-]{1,128}$'),
  seq bigserial NOT NULL,
  definition jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (scope, id)
);
