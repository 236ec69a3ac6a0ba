-- The product catalog. `search` is computed on write (name A, channels and tags B, description C).
CREATE TABLE inventory_products (
  product_id text PRIMARY KEY CHECK (product_id ~ '^[A-Za-z0-9_.:-]{1,128}$'),
  name text NOT NULL,
  description text NOT NULL,
  publisher_properties jsonb NOT NULL,
  channels text[] NOT NULL,
  delivery_type text NOT NULL CHECK (delivery_type IN ('guaranteed', 'non_guaranteed')),
  format_ids jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- `agent_url#id` of each format, for the format filter
  format_keys text[] NOT NULL DEFAULT '{}',
  pricing_options jsonb NOT NULL,
  currencies text[] NOT NULL,
  has_fixed_price boolean NOT NULL,
  tags text[] NOT NULL DEFAULT '{}',
  -- ISO 3166-1 alpha-2; empty = everywhere
  countries text[] NOT NULL DEFAULT '{}',
  daily_avails bigint NOT NULL CHECK (daily_avails > 0),
  ctr numeric(6, 5) NOT NULL CHECK (ctr >= 0 AND ctr <= 1),
  -- catalog order when nothing ranks
  position integer NOT NULL,
  search tsvector NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX inventory_products_search ON inventory_products USING gin (search);
CREATE INDEX inventory_products_channels ON inventory_products USING gin (channels);
