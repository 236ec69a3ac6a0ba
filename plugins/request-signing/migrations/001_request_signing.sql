-- RFC 9421 replay cache of incoming signed requests: (keyid, nonce) until the signature expires + 60 s.
CREATE TABLE request_signature_nonces (
  keyid text NOT NULL,
  nonce text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (keyid, nonce)
);
CREATE INDEX request_signature_nonces_live ON request_signature_nonces (keyid, expires_at);

-- Buyer signing keys this agent refuses (configured or revoked by an operator).
CREATE TABLE request_signature_revocations (
  keyid text PRIMARY KEY,
  revoked_at timestamptz NOT NULL
);

-- Buyers' JWKS documents (brand.json -> jwks_uri), shared by instances.
CREATE TABLE request_signing_jwks (
  source text PRIMARY KEY,
  jwks jsonb NOT NULL,
  fetched_at timestamptz NOT NULL
);
