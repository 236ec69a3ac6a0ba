-- Users signing in through an external OpenID Connect issuer: (issuer, subject) -> user.
-- Users of the built-in authorization server are named by their id (the token's subject).
CREATE TABLE user_identities (
  issuer text NOT NULL,
  subject text NOT NULL,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (issuer, subject)
);
