-- Each instance remembers which grants it found live (plugins/oauth/live-grants.ts); revoking or
-- deleting a grant, from whatever code path or process, tells every instance on commit.
CREATE FUNCTION oauth_grant_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('oauth_grant_changes', CASE WHEN TG_LEVEL = 'STATEMENT' THEN '*' ELSE OLD.id::text END);
  RETURN NULL;
END;
$$;

CREATE TRIGGER oauth_grants_changed AFTER DELETE OR UPDATE OF id, revoked_at ON oauth_grants
  FOR EACH ROW EXECUTE FUNCTION oauth_grant_changed();
CREATE TRIGGER oauth_grants_truncated AFTER TRUNCATE ON oauth_grants FOR EACH STATEMENT EXECUTE FUNCTION oauth_grant_changed();
