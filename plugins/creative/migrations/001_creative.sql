-- The format catalog: the reference formats (seed) and the vendor's own (import CLI).
-- `definition` is the wire shape without this agent's URL (added when answering).
CREATE TABLE creative_formats (
  id text PRIMARY KEY CHECK (id ~ '^[a-zA-Z0-9_-]{1,128}$'),
  -- listing order; cursors page (position, id)
  position integer NOT NULL,
  source text NOT NULL CHECK (source IN ('reference', 'vendor')),
  type text NOT NULL,
  name text NOT NULL,
  definition jsonb NOT NULL,
  macros text[] NOT NULL DEFAULT '{}',
  -- content slot types, for the asset_types filter
  asset_types text[] NOT NULL DEFAULT '{}',
  -- primary render size; NULL when the format has no fixed size
  width integer,
  height integer,
  -- NULL for formats without any visual size (audio)
  responsive boolean,
  updated_at timestamptz NOT NULL
);
CREATE INDEX creative_formats_order ON creative_formats (position, id);

-- Rendered previews served at GET /previews/{id}: the manifest (macros applied) and the format it renders in.
CREATE TABLE creative_previews (
  id text PRIMARY KEY,
  principal_id text NOT NULL,
  format_id text NOT NULL,
  format jsonb NOT NULL,
  manifest jsonb NOT NULL,
  input jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX creative_previews_expiry ON creative_previews (expires_at);

-- Files the generator produced (rendered images), served at GET /creative-assets/{id} until they expire.
CREATE TABLE creative_assets (
  id text PRIMARY KEY,
  content_type text NOT NULL,
  body text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX creative_assets_expiry ON creative_assets (expires_at);
