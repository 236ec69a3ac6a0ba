-- Property and collection lists that package targeting and get_products name, as fetched from the governance
-- agent the reference names (until the list's cache_valid_until), or pinned by a sandbox deployment.
CREATE TABLE sales_list_cache (
  agent_url text NOT NULL,
  list_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('property', 'collection')),
  items jsonb NOT NULL,
  fetched_at timestamptz NOT NULL,
  -- NULL: pinned (a sandbox fixture), never refetched.
  valid_until timestamptz,
  PRIMARY KEY (agent_url, list_id, kind)
);
