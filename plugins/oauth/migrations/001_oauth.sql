-- Signing keys of the built-in authorization server (private JWK sealed with the SecretBox).
CREATE TABLE oauth_keys (
  kid text PRIMARY KEY,
  alg text NOT NULL,
  private_jwk text NOT NULL,
  public_jwk jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  -- retired keys stop signing; their tokens stop verifying
  retired_at timestamptz
);

-- Sign-in credentials of users (the Auth port's users; user_id is their id). argon2id hashes.
CREATE TABLE oauth_passwords (
  user_id uuid PRIMARY KEY,
  login text NOT NULL,
  password_hash text NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX oauth_passwords_login ON oauth_passwords (lower(login));

-- RFC 7591 dynamically registered clients.
CREATE TABLE oauth_clients (
  client_id text PRIMARY KEY,
  -- SHA-256 of the secret of confidential clients; NULL for public clients (auth method none)
  secret_hash bytea,
  client_name text,
  redirect_uris text[] NOT NULL,
  token_endpoint_auth_method text NOT NULL,
  grant_types text[] NOT NULL,
  scope text,
  created_at timestamptz NOT NULL
);

-- One sign-in's consent: the refresh token family and every access token minted from it.
CREATE TABLE oauth_grants (
  id uuid PRIMARY KEY,
  client_id text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  user_id uuid NOT NULL,
  scope text,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  revoked_reason text
);

-- Authorization codes (single use, PKCE S256), stored as SHA-256 hashes.
CREATE TABLE oauth_codes (
  code_hash bytea PRIMARY KEY,
  client_id text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  user_id uuid NOT NULL,
  redirect_uri text NOT NULL,
  code_challenge text NOT NULL,
  scope text,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  -- the grant the code was exchanged for (revoked when the code is replayed)
  grant_id uuid
);

-- Rotating refresh tokens: each use replaces the token; a used one presented again revokes the grant.
CREATE TABLE oauth_refresh_tokens (
  token_hash bytea PRIMARY KEY,
  grant_id uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id);
