-- Moved from the `sales` plugin's 002 (same definitions): IF NOT EXISTS, so a database that ran the
-- old `sales` migrations keeps its tables and rows. Accounts belong to sales-accounts, which runs first.

-- First-party audiences (sync_audiences): hashed identifiers only; matching is simulated per member.
CREATE TABLE IF NOT EXISTS sales_audiences (
  account_id text NOT NULL REFERENCES sales_accounts (account_id),
  audience_id text NOT NULL,
  owner text NOT NULL,
  seller_id text NOT NULL,
  name text,
  audience_type text,
  consent_basis text,
  tags text[] NOT NULL DEFAULT '{}',
  status text NOT NULL CHECK (status IN ('processing', 'ready', 'too_small')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, audience_id)
);

CREATE TABLE IF NOT EXISTS sales_audience_members (
  account_id text NOT NULL,
  audience_id text NOT NULL,
  external_id text NOT NULL,
  -- {hashed_email?, hashed_phone?, uids?}: digests and universal ids, never plaintext
  identifiers jsonb NOT NULL,
  -- the id type that matched, NULL when none did
  matched_by text,
  PRIMARY KEY (account_id, audience_id, external_id),
  FOREIGN KEY (account_id, audience_id) REFERENCES sales_audiences (account_id, audience_id) ON DELETE CASCADE
);

-- Conversion event sources (sync_event_sources) of an account; ids are the buyer's, unique per buyer.
CREATE TABLE IF NOT EXISTS sales_event_sources (
  owner text NOT NULL,
  event_source_id text NOT NULL,
  account_id text NOT NULL REFERENCES sales_accounts (account_id),
  name text,
  event_types text[],
  allowed_domains text[],
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (owner, event_source_id)
);

-- Logged conversion events, deduplicated by (source, event id).
CREATE TABLE IF NOT EXISTS sales_events (
  owner text NOT NULL,
  event_source_id text NOT NULL,
  event_id text NOT NULL,
  event_type text NOT NULL,
  event_time timestamptz NOT NULL,
  value numeric(16, 2),
  currency text,
  test boolean NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (owner, event_source_id, event_id),
  FOREIGN KEY (owner, event_source_id) REFERENCES sales_event_sources (owner, event_source_id) ON DELETE CASCADE
);

-- Product catalogs (sync_catalogs) and their validated items.
CREATE TABLE IF NOT EXISTS sales_catalogs (
  account_id text NOT NULL REFERENCES sales_accounts (account_id),
  catalog_id text NOT NULL,
  owner text NOT NULL,
  platform_id text NOT NULL,
  type text NOT NULL,
  name text,
  url text,
  feed_format text,
  update_frequency text,
  -- hash of the definition and items, to answer `unchanged`
  content_hash text NOT NULL,
  item_count integer NOT NULL,
  items_approved integer NOT NULL,
  items_pending integer NOT NULL,
  items_rejected integer NOT NULL,
  last_synced_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, catalog_id)
);

CREATE TABLE IF NOT EXISTS sales_catalog_items (
  account_id text NOT NULL,
  catalog_id text NOT NULL,
  item_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('approved', 'pending', 'rejected', 'warning')),
  reasons jsonb NOT NULL DEFAULT '[]'::jsonb,
  data jsonb NOT NULL,
  PRIMARY KEY (account_id, catalog_id, item_id),
  FOREIGN KEY (account_id, catalog_id) REFERENCES sales_catalogs (account_id, catalog_id) ON DELETE CASCADE
);
