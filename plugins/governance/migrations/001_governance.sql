-- Campaign plans (sync_plans), per owning organization; `plan` holds the validated request item.
CREATE TABLE governance_plans (
  owner text NOT NULL,
  plan_id text NOT NULL,
  version integer NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'suspended', 'completed')),
  brand_domain text NOT NULL,
  budget_total numeric(16, 2) NOT NULL,
  currency text NOT NULL,
  flight_start timestamptz NOT NULL,
  flight_end timestamptz NOT NULL,
  plan jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (owner, plan_id)
);

-- Every check_governance decision (the audit log).
CREATE TABLE governance_checks (
  check_id text PRIMARY KEY,
  owner text NOT NULL,
  plan_id text NOT NULL,
  plan_version integer NOT NULL,
  caller text NOT NULL,
  tool text,
  phase text NOT NULL,
  purchase_type text NOT NULL,
  status text NOT NULL CHECK (status IN ('approved', 'denied', 'conditions')),
  mode text NOT NULL,
  explanation text NOT NULL,
  findings jsonb NOT NULL,
  conditions jsonb NOT NULL,
  categories_evaluated text[] NOT NULL,
  policies_evaluated text[] NOT NULL,
  amount numeric(16, 2),
  governance_context text NOT NULL,
  expires_at timestamptz,
  created_at timestamptz NOT NULL,
  FOREIGN KEY (owner, plan_id) REFERENCES governance_plans (owner, plan_id) ON DELETE CASCADE
);
CREATE INDEX governance_checks_plan ON governance_checks (owner, plan_id, created_at, check_id);
CREATE INDEX governance_checks_context ON governance_checks (owner, governance_context);

-- What sellers reported after acting on a check (report_plan_outcome): the committed budget.
CREATE TABLE governance_outcomes (
  outcome_id text PRIMARY KEY,
  owner text NOT NULL,
  plan_id text NOT NULL,
  check_id text,
  outcome text NOT NULL CHECK (outcome IN ('completed', 'failed', 'delivery')),
  purchase_type text NOT NULL,
  governance_context text NOT NULL,
  seller_reference text,
  committed_budget numeric(16, 2),
  created_at timestamptz NOT NULL,
  FOREIGN KEY (owner, plan_id) REFERENCES governance_plans (owner, plan_id) ON DELETE CASCADE
);
CREATE INDEX governance_outcomes_plan ON governance_outcomes (owner, plan_id, created_at, outcome_id);
