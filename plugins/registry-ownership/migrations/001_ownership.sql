-- Server-issued nonces: single use, scoped to (organization, domain), short-lived. Only a hash is kept.
CREATE TABLE ownership_challenges (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL,
  domain text NOT NULL,
  nonce_hash bytea NOT NULL,
  issued_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('issued', 'consumed', 'invalidated', 'superseded')),
  method text,
  failure text
);
-- At most one live nonce per (organization, domain): a new one supersedes the old.
CREATE UNIQUE INDEX ownership_challenges_live ON ownership_challenges (org_id, domain) WHERE status = 'issued';

-- Successful proofs; saves consult the latest one.
CREATE TABLE ownership_proofs (
  org_id uuid NOT NULL,
  domain text NOT NULL,
  method text NOT NULL,
  proven_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, domain)
);
