-- The signal catalog. `search` is computed on write (weights: name A, tags B, description C).
CREATE TABLE signals (
  id text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{1,128}$'),
  name text NOT NULL,
  description text NOT NULL,
  signal_type text NOT NULL CHECK (signal_type IN ('marketplace', 'custom', 'owned')),
  data_provider text NOT NULL,
  data_provider_domain text,
  coverage_percentage numeric(5, 2) NOT NULL CHECK (coverage_percentage BETWEEN 0 AND 100),
  -- NULL: no incremental cost (owned signals)
  cpm numeric(12, 2),
  currency text,
  tags text[] NOT NULL DEFAULT '{}',
  -- ISO 3166-1 alpha-2; empty = available everywhere
  countries text[] NOT NULL DEFAULT '{}',
  -- custom signals belong to one organization; NULL = listed for everyone
  owner_org uuid,
  -- per-platform / per-sales-agent deployability: [{platform|agent_url, estimated_activation_duration_minutes}]
  platforms jsonb NOT NULL DEFAULT '[]'::jsonb,
  agents jsonb NOT NULL DEFAULT '[]'::jsonb,
  platform_names text[] NOT NULL DEFAULT '{}',
  agent_urls text[] NOT NULL DEFAULT '{}',
  search tsvector NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX signals_search ON signals USING gin (search);

-- Known deployment targets and who may use them.
CREATE TABLE signal_destinations (
  key text PRIMARY KEY,
  type text NOT NULL CHECK (type IN ('platform', 'agent')),
  platform text,
  agent_url text,
  -- private agents are visible only to their owner and allowed organizations
  visibility text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'private')),
  owner_org uuid,
  -- NULL: any organization may deploy; otherwise only these (and the owner)
  allowed_orgs uuid[],
  CHECK ((type = 'platform' AND platform IS NOT NULL) OR (type = 'agent' AND agent_url IS NOT NULL))
);

CREATE TABLE signal_activations (
  id uuid PRIMARY KEY,
  signal_id text NOT NULL REFERENCES signals (id) ON DELETE CASCADE,
  principal_id text NOT NULL,
  destination_key text NOT NULL,
  destination jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'live')),
  activation_key jsonb,
  estimated_minutes numeric NOT NULL,
  ready_at timestamptz NOT NULL,
  deployed_at timestamptz,
  created_at timestamptz NOT NULL,
  UNIQUE (signal_id, principal_id, destination_key)
);
