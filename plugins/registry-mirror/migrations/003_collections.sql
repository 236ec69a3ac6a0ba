-- Collections and merges rebuilt from the followed feed (collection.*, property.merged).
CREATE TABLE mirror_collections (
  collection_rid uuid PRIMARY KEY,
  collection_id text,
  publisher_domain text,
  name text,
  kind text,
  distribution jsonb,
  -- active | removed | merged
  status text NOT NULL,
  merged_into uuid,
  last_event_id uuid NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX mirror_collections_publisher ON mirror_collections (publisher_domain);

ALTER TABLE mirror_properties ADD COLUMN merged_into uuid;
