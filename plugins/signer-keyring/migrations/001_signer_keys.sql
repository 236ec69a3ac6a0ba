-- Webhook-signing keys of this deployment. IF NOT EXISTS: earlier versions created this table under the
-- names of two adapter plugins (signer-ed25519, signer-ecdsa-p256) that this one replaces.
CREATE TABLE IF NOT EXISTS signer_keys (
  kid text PRIMARY KEY,
  alg text NOT NULL,
  private_jwk jsonb NOT NULL,
  public_jwk jsonb NOT NULL,
  -- active: signs new webhooks (one per alg); published: verifiable, not used; revoked: withdrawn
  status text NOT NULL CHECK (status IN ('active', 'published', 'revoked')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS signer_keys_one_active ON signer_keys (alg) WHERE status = 'active';
