-- Agent inventory search index (search-postgres). One document per agent URL; arrays + GIN
-- serve the "column && values" dimension filters; (base_score DESC, agent_url) is the sort and
-- keyset order. agent_url uses the C collation so the order is byte order on every server.
CREATE TABLE search_agent_profiles (
  agent_url text COLLATE "C" PRIMARY KEY,
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
  updated_at timestamptz NOT NULL,
  visibility text NOT NULL DEFAULT 'public',
  owner_org_id uuid,
  -- 0.1 * ln(property_count + 1) + 0.05 * has_tmp, computed once in TypeScript (baseScore)
  base_score float8 NOT NULL
);
CREATE INDEX search_agent_profiles_channels ON search_agent_profiles USING gin (channels);
CREATE INDEX search_agent_profiles_property_types ON search_agent_profiles USING gin (property_types);
CREATE INDEX search_agent_profiles_markets ON search_agent_profiles USING gin (markets);
CREATE INDEX search_agent_profiles_categories ON search_agent_profiles USING gin (categories);
CREATE INDEX search_agent_profiles_tags ON search_agent_profiles USING gin (tags);
CREATE INDEX search_agent_profiles_delivery_types ON search_agent_profiles USING gin (delivery_types);
CREATE INDEX search_agent_profiles_rank ON search_agent_profiles (base_score DESC, agent_url);
