CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  -- public | member | admin: standing of the organization's keys
  tier text NOT NULL CHECK (tier IN ('public', 'member', 'admin')),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX organizations_name_key ON organizations (lower(name));

CREATE TABLE users (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL,
  email text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id uuid REFERENCES users (id) ON DELETE SET NULL,
  name text NOT NULL,
  -- first characters of the key, shown in listings so a key can be recognised; not a secret
  prefix text NOT NULL,
  -- SHA-256 of the full key; keys are 256-bit random, so a fast hash is not brute-forceable
  key_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_org ON api_keys (org_id);
