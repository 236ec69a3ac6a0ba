-- RFC 8707 resource indicators: what an authorization request asked for (codes) and what a grant's
-- access tokens are minted for (their `aud`). NULL on rows from before: the registry's resources.
ALTER TABLE oauth_codes ADD COLUMN resources text[];
ALTER TABLE oauth_grants ADD COLUMN resources text[];
