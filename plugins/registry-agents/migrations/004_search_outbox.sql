-- Search index outbox. Writers upsert one row per agent URL in the transaction that changes its
-- inventory profile (or visibility); the search-sync job reads the agent's current document and
-- applies it to the Search port, then deletes the row if its version did not move meanwhile. One
-- row per agent coalesces changes to the latest state and keeps them in order per agent.
CREATE SEQUENCE registry_search_outbox_version;
CREATE TABLE registry_search_outbox (
  agent_url text PRIMARY KEY,
  version bigint NOT NULL DEFAULT nextval('registry_search_outbox_version'),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  last_error text,
  created_at timestamptz NOT NULL
);
CREATE INDEX registry_search_outbox_due ON registry_search_outbox (next_attempt_at, version);

-- What the index has applied: the generation of the last full rebuild and the highest outbox
-- version applied since. The index keeps the same pair (Search.stamp); start-up compares them.
-- Its row lock is the drain's claim: one drainer at a time, others skip (FOR UPDATE SKIP LOCKED).
-- generation NULL = never built through the outbox, so the first drain rebuilds the index.
CREATE TABLE registry_search_watermark (
  id integer PRIMARY KEY CHECK (id = 1),
  generation text,
  applied_version bigint NOT NULL DEFAULT 0,
  index_kind text,
  rebuilt_at timestamptz
);
INSERT INTO registry_search_watermark (id) VALUES (1);
