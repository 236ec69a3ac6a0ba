-- Discovery registry model: agents (enrolled by organizations or discovered in adagents.json),
-- their capabilities and inventory profiles, publishers with their properties and
-- authorizations, and operators' brand.json declarations. Every table is prefixed registry_.

-- One row per agent URL (normalized: lowercase scheme/host, no default port, no trailing slash).
CREATE TABLE registry_agents (
  id uuid PRIMARY KEY,
  url text NOT NULL UNIQUE,
  name text,
  -- agent type vocabulary: brand rights measurement governance creative sales buying signals
  type text CHECK (type IN ('brand', 'rights', 'measurement', 'governance', 'creative', 'sales', 'buying', 'signals')),
  protocol text CHECK (protocol IN ('mcp', 'a2a')),
  description text,
  contact jsonb,
  visibility text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'members_only', 'private')),
  operator_domain text,
  -- organization that enrolled the agent; NULL = only discovered (not in the catalog)
  owner_org_id uuid,
  owner_org_name text,
  -- inventory the owner declares (categories, delivery_types, format_ids, has_tmp, ...), merged into the profile
  declared_inventory jsonb NOT NULL DEFAULT '{}'::jsonb,
  enrolled_at timestamptz,
  discovered_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX registry_agents_owner ON registry_agents (owner_org_id) WHERE owner_org_id IS NOT NULL;
CREATE INDEX registry_agents_operator ON registry_agents (operator_domain) WHERE operator_domain IS NOT NULL;

-- Capability catalogs crawled from each agent on a TTL (crawled_at).
CREATE TABLE registry_agent_capabilities (
  agent_id uuid PRIMARY KEY REFERENCES registry_agents (id) ON DELETE CASCADE,
  creative_capabilities jsonb,
  signals_capabilities jsonb,
  -- [{metric_id, accreditations:[{accrediting_body, ...}], ...}]
  metrics jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- derived from metrics for indexed filtering
  metric_ids text[] NOT NULL DEFAULT '{}',
  accrediting_bodies text[] NOT NULL DEFAULT '{}',
  crawled_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX registry_agent_capabilities_metrics ON registry_agent_capabilities USING gin (metric_ids);
CREATE INDEX registry_agent_capabilities_bodies ON registry_agent_capabilities USING gin (accrediting_bodies);

-- Inventory profile per agent: the source of truth the search adapters index.
CREATE TABLE registry_agent_profiles (
  agent_id uuid PRIMARY KEY REFERENCES registry_agents (id) ON DELETE CASCADE,
  channels text[] NOT NULL DEFAULT '{}',
  property_types text[] NOT NULL DEFAULT '{}',
  markets text[] NOT NULL DEFAULT '{}',
  categories text[] NOT NULL DEFAULT '{}',
  tags text[] NOT NULL DEFAULT '{}',
  delivery_types text[] NOT NULL DEFAULT '{}',
  format_ids jsonb NOT NULL DEFAULT '[]'::jsonb,
  property_count int NOT NULL DEFAULT 0,
  publisher_count int NOT NULL DEFAULT 0,
  has_tmp boolean NOT NULL DEFAULT false,
  category_taxonomy text,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE registry_publishers (
  id uuid PRIMARY KEY,
  domain text NOT NULL UNIQUE,
  -- adagents_json (crawled) | discovered (named by another file, not crawled yet)
  source text NOT NULL DEFAULT 'adagents_json',
  has_adagents boolean NOT NULL DEFAULT false,
  adagents_valid boolean NOT NULL DEFAULT false,
  -- last projected document and its validation verdict
  adagents jsonb,
  validation_errors jsonb NOT NULL DEFAULT '[]'::jsonb,
  contact jsonb,
  last_validated timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE registry_properties (
  id uuid PRIMARY KEY,
  publisher_id uuid NOT NULL REFERENCES registry_publishers (id) ON DELETE CASCADE,
  -- property_id from the file, or a key derived from type + first identifier
  property_key text NOT NULL,
  property_id text,
  property_type text NOT NULL,
  name text NOT NULL,
  identifiers jsonb NOT NULL DEFAULT '[]'::jsonb,
  tags text[] NOT NULL DEFAULT '{}',
  channels text[] NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'stale')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (publisher_id, property_key)
);
CREATE INDEX registry_properties_tags ON registry_properties USING gin (tags);

-- Identifier index for lookups by (type, value); values stored lowercased.
CREATE TABLE registry_property_identifiers (
  property_id uuid NOT NULL REFERENCES registry_properties (id) ON DELETE CASCADE,
  type text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (property_id, type, value)
);
CREATE INDEX registry_property_identifiers_lookup ON registry_property_identifiers (type, value);

-- adagents.json authorized_agents[] per publisher (what lookup/domain answers).
CREATE TABLE registry_publisher_agents (
  publisher_id uuid NOT NULL REFERENCES registry_publishers (id) ON DELETE CASCADE,
  agent_id uuid NOT NULL REFERENCES registry_agents (id) ON DELETE CASCADE,
  authorized_for text,
  authorization_types text[] NOT NULL DEFAULT '{}',
  delegation_types text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (publisher_id, agent_id)
);
CREATE INDEX registry_publisher_agents_agent ON registry_publisher_agents (agent_id);

-- Agent x property, resolved from the entry's selector (property_ids, property_tags, inline, publisher_properties).
CREATE TABLE registry_authorizations (
  agent_id uuid NOT NULL REFERENCES registry_agents (id) ON DELETE CASCADE,
  property_id uuid NOT NULL REFERENCES registry_properties (id) ON DELETE CASCADE,
  publisher_id uuid NOT NULL REFERENCES registry_publishers (id) ON DELETE CASCADE,
  authorization_type text NOT NULL,
  -- direct | delegated | ad_network; NULL when the file does not say
  delegation_type text,
  authorized_for text,
  countries text[] NOT NULL DEFAULT '{}',
  effective_from timestamptz,
  effective_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (agent_id, property_id)
);
CREATE INDEX registry_authorizations_property ON registry_authorizations (property_id);
CREATE INDEX registry_authorizations_publisher ON registry_authorizations (publisher_id);

-- Operators' brand.json documents (the other side of two-sided authorization).
CREATE TABLE registry_operators (
  domain text PRIMARY KEY,
  brand_json jsonb,
  brand_json_valid boolean NOT NULL DEFAULT false,
  house_name text,
  -- house and brand display names (for /api/search)
  brand_names text[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- brand.json brands[].properties[]: property + relationship (owned | direct | delegated | ad_network).
CREATE TABLE registry_operator_properties (
  operator_domain text NOT NULL REFERENCES registry_operators (domain) ON DELETE CASCADE,
  property_type text NOT NULL,
  -- lowercased identifier (domain, bundle id, ...)
  identifier text NOT NULL,
  relationship text NOT NULL DEFAULT 'owned',
  brand_id text,
  store text,
  region text,
  PRIMARY KEY (operator_domain, property_type, identifier)
);
CREATE INDEX registry_operator_properties_identifier ON registry_operator_properties (identifier);

-- brand.json agents[] (and brands[].agents[]): which agent URLs an operator declares as its own.
CREATE TABLE registry_operator_agents (
  operator_domain text NOT NULL REFERENCES registry_operators (domain) ON DELETE CASCADE,
  agent_url text NOT NULL,
  agent_type text,
  PRIMARY KEY (operator_domain, agent_url)
);
CREATE INDEX registry_operator_agents_url ON registry_operator_agents (agent_url);
