-- What the index has applied (generation of the last rebuild, highest outbox version since), kept
-- with the index so a replaced or truncated index is recognised at start-up. At most one row.
CREATE TABLE search_index_stamp (
  id int PRIMARY KEY CHECK (id = 1),
  generation text NOT NULL,
  version bigint NOT NULL
);
