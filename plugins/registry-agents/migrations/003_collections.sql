-- Publisher collections (adagents.json `collections`: shows, series, podcasts...) and their
-- distribution identifiers; records found to be one (identifiers overlap) are merged.
CREATE TABLE registry_collections (
  id uuid PRIMARY KEY,
  publisher_id uuid NOT NULL REFERENCES registry_publishers (id) ON DELETE CASCADE,
  collection_id text NOT NULL,
  name text NOT NULL,
  kind text,
  -- the collection object as published
  data jsonb NOT NULL,
  -- active | removed (no longer in the file) | merged (into merged_into)
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removed', 'merged')),
  merged_into uuid,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (publisher_id, collection_id)
);

-- Distribution identifiers, values lowercased, for overlap (merge) detection and lookups.
CREATE TABLE registry_collection_identifiers (
  collection_rid uuid NOT NULL REFERENCES registry_collections (id) ON DELETE CASCADE,
  type text NOT NULL,
  value text NOT NULL,
  publisher_domain text NOT NULL,
  PRIMARY KEY (collection_rid, type, value, publisher_domain)
);
CREATE INDEX registry_collection_identifiers_lookup ON registry_collection_identifiers (type, value);

-- A property re-published under another key with the same identifiers is merged into the new record.
ALTER TABLE registry_properties ADD COLUMN merged_into uuid;
ALTER TABLE registry_properties DROP CONSTRAINT registry_properties_status_check;
ALTER TABLE registry_properties ADD CONSTRAINT registry_properties_status_check CHECK (status IN ('active', 'stale', 'merged'));
