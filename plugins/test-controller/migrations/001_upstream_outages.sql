-- Sandbox outages (comply_test_controller force_upstream_unavailable): a caller's calls to `tool` find its
-- upstream unreachable until `until` (the compliance session). `*`: every tool with an upstream.
CREATE TABLE sandbox_upstream_outages (
  principal_id text NOT NULL,
  tool text NOT NULL,
  until timestamptz NOT NULL,
  PRIMARY KEY (principal_id, tool)
);
