-- Keys of the creative plugin shared by every instance of one database. `preview-link`: the AES-256-GCM
-- key that seals stateless preview ids (plugins/creative/preview-links.ts); sealed with the SecretBox.
-- Made once by whichever instance needs it first (INSERT ... ON CONFLICT DO NOTHING, then read back).
CREATE TABLE creative_keys (
  name text PRIMARY KEY,
  secret text NOT NULL,
  created_at timestamptz NOT NULL
);
