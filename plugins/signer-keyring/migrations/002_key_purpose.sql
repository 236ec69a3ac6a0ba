-- One keyring per key purpose: webhook-signing keys (the Signer port) and response-signing keys
-- (the ResponseSigner port, signed task answers such as verify_brand_claim); one active key per
-- algorithm and purpose.
ALTER TABLE signer_keys ADD COLUMN IF NOT EXISTS purpose text NOT NULL DEFAULT 'webhook-signing'
  CHECK (purpose IN ('webhook-signing', 'response-signing'));
DROP INDEX IF EXISTS signer_keys_one_active;
CREATE UNIQUE INDEX IF NOT EXISTS signer_keys_one_active_per_purpose ON signer_keys (alg, purpose) WHERE status = 'active';
