-- Proposals (get_products in brief mode): curated media plans a buyer refines, finalizes and buys
-- with create_media_buy {proposal_id, total_budget}. Keyed per caller and account ('' = no account named).
CREATE TABLE sales_proposals (
  owner text NOT NULL,
  account_key text NOT NULL,
  proposal_id text NOT NULL,
  name text NOT NULL,
  description text NOT NULL,
  brief text,
  -- [{product_id, pricing_option_id, allocation_percentage, channel, rationale}], percentages sum to 100
  allocations jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'committed')),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (owner, account_key, proposal_id)
);
