-- The leaves of generative builds (AdCP build_variant): one row per creative a build produced, its id
-- the build_variant_id the answer carries and report_usage names (as creative_id, or next to a promoted
-- one). Owned by the calling organization, under the account reference the build named (NULL: none);
-- the model's consumption when a model wrote the copy. Replaces creative_generation_usage, whose rows
-- named no creative a buyer could report against.
CREATE TABLE creative_build_variants (
  id text PRIMARY KEY,
  owner text NOT NULL,
  -- {account_id} or {brand, operator, sandbox} as the build named it
  account jsonb,
  -- the build: its task id (asynchronous builds) or its principal and idempotency key
  build_id text NOT NULL,
  position integer NOT NULL,
  format_id text NOT NULL,
  model text,
  input_tokens integer CHECK (input_tokens >= 0),
  output_tokens integer CHECK (output_tokens >= 0),
  created_at timestamptz NOT NULL
);
CREATE INDEX creative_build_variants_build ON creative_build_variants (build_id, position);

DROP TABLE creative_generation_usage;

-- A usage record of a generated creative names its leaf; account_id is then the library's account
-- when one resolves, else the reference's key (see plugins/creative/build-variants.ts).
ALTER TABLE creative_usage_reports ADD COLUMN build_variant_id text;
